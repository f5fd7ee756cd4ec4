"""`zoo-translate`: translate stdin to stdout with an export or a training workdir.

    zoo-translate --model EXPORT_DIR_OR_WORKDIR [--beam_width K] [--batch_size N] < src.txt > hyp.txt
    zoo-translate --model DIR --sampling_temperature T [--sampling_top_k K] [--seed S] < src.txt

With `--sampling_temperature` > 0 each translation is drawn from the model (the export's
`sample` signature) instead of searched; a fixed `--seed` reproduces the draws.

One output line per input line, in order; an empty input line gives an empty output line.
Lines are translated in batches as they arrive, so it works in a pipe as well as on files.
Progress goes to stderr when stderr is a terminal or `--progress` is set.
"""

import os
import sys

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("model", None, "A SavedModel dir, an export dir of versions (newest used) or a zoo-train workdir.")
flags.DEFINE_integer("beam_width", None, "Beam width; unset: the export's default decoding (serving_default).")
flags.DEFINE_integer("batch_size", 32, "Most sentences translated at once.")
flags.DEFINE_float("sampling_temperature", None, "Sample translations at this temperature (> 0) instead of searching.")
flags.DEFINE_integer("sampling_top_k", 0, "Sample among the k most probable tokens only (0: all of them).")
flags.DEFINE_integer("seed", 0, "Seed of the sampling draws.")
flags.DEFINE_bool("progress", None, "Show progress on stderr (default: when stderr is a terminal).")
flags.mark_flag_as_required("model")


def main(argv):
    if len(argv) > 1:
        sys.exit(f"zoo-translate: unexpected arguments {argv[1:]}; the source text is read from stdin")
    if not os.path.isdir(FLAGS.model):
        sys.exit(f"zoo-translate: --model {FLAGS.model!r} is not a directory; expected an export or a workdir")
    if FLAGS.batch_size < 1 or (FLAGS.beam_width is not None and FLAGS.beam_width < 1):
        sys.exit(f"zoo-translate: expected --batch_size >= 1 and --beam_width >= 1, got "
                 f"{FLAGS.batch_size} and {FLAGS.beam_width}")
    sampling = None
    if FLAGS.sampling_temperature is not None:
        if FLAGS.sampling_temperature <= 0 or FLAGS.sampling_top_k < 0 or FLAGS.beam_width is not None:
            sys.exit(f"zoo-translate: sampling expects --sampling_temperature > 0, --sampling_top_k >= 0 and no "
                     f"--beam_width, got {FLAGS.sampling_temperature}, {FLAGS.sampling_top_k} and {FLAGS.beam_width}")
        sampling = {"temperature": FLAGS.sampling_temperature, "top_k": FLAGS.sampling_top_k, "seed": FLAGS.seed}
    # Imported after the flags are checked, so --help and usage errors skip TensorFlow's import.
    from zoo.inference import translate_stdin

    try:
        translate_stdin(FLAGS.model, FLAGS.beam_width, FLAGS.batch_size, FLAGS.progress, sampling)
    except (FileNotFoundError, ValueError) as error:
        sys.exit(f"zoo-translate: {error}")
    except BrokenPipeError:  # e.g. `| head`: the reader is gone, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def run():
    app.run(main)


if __name__ == "__main__":
    run()
