"""`zoo-translate`: translate stdin to stdout with an export or a training workdir.

    zoo-translate --model EXPORT_DIR_OR_WORKDIR [--beam_width K] [--batch_size N] [--shortlist] < src.txt > hyp.txt
    zoo-translate --model DIR --sampling_temperature T [--sampling_top_k K] [--seed S] < src.txt

With `--sampling_temperature` > 0 each translation is drawn from the model (the export's
`sample` signature) instead of searched; a fixed `--seed` reproduces the draws.

With `--shortlist` a workdir decodes with the vocabulary selection table it was trained with
(`vocab/shortlist.npz`); an export decodes as it was exported (`zoo-export --shortlist`).

One output line per input line, in order; an empty input line gives an empty output line.
Lines are translated in batches as they arrive, so it works in a pipe as well as on files.
Progress goes to stderr when stderr is a terminal or `--progress` is set.
`--profile_startup` prints to stderr where the time from the process start went (`zoo.startup`).
"""

from zoo import startup  # first: the profile's first phase ends at its import

import os
import sys

from absl import flags

from zoo import cli
from zoo.constants import FLOAT32_MAX, INT32_MAX, MissingOpLibraryError

FLAGS = flags.FLAGS
flags.DEFINE_string("model", None, "A SavedModel dir, an export dir of versions (newest used) or a zoo-train workdir.")
flags.DEFINE_integer("beam_width", None, "Beam width (1: greedy search); unset: the export's default decoding "
                     "(serving_default).",
                     lower_bound=1)
flags.DEFINE_integer("batch_size", 32, "Most sentences translated at once.", lower_bound=1)
flags.DEFINE_integer("batches_in_flight", 2, "Batches translated at once, each on a thread of its own (a search "
                     "leaves cores idle that a second batch fills; the same translations).", lower_bound=1)
flags.DEFINE_float("sampling_temperature", None, "Sample translations at this temperature (> 0) instead of searching.")
flags.DEFINE_integer("sampling_top_k", 0, "Sample among the k most probable tokens only (0: all of them).",
                     lower_bound=0, upper_bound=INT32_MAX)  # an int32, as the export's `sample` signature takes
flags.DEFINE_integer("seed", 0, "Seed of the sampling draws (an int32, as the export's `sample` signature takes).",
                     lower_bound=-INT32_MAX - 1, upper_bound=INT32_MAX)
flags.DEFINE_bool("progress", None, "Show progress on stderr (default: when stderr is a terminal).")
flags.DEFINE_bool("profile_startup", False, startup.FLAG_HELP)
flags.DEFINE_bool("shortlist", None, "Vocabulary selection (a workdir's vocab/shortlist.npz) or not (--noshortlist); "
                  "default: as the model was trained or exported.")
flags.mark_flag_as_required("model")


def main(argv):
    del argv  # cli.run refuses positional arguments (the source text is read from stdin)
    if FLAGS.profile_startup:
        startup.enable()
    cli.check_standard_streams("stdin", "stdout")
    if not os.path.isdir(FLAGS.model):
        raise cli.CommandError(f"--model {FLAGS.model!r} is not a directory; expected an export or a workdir")
    sampling = None
    if FLAGS.sampling_temperature is not None:
        # float32's largest at most: the export's `sample` reads 1e39 as an infinite temperature
        if not 0 < FLAGS.sampling_temperature <= FLOAT32_MAX or FLAGS.beam_width is not None:
            raise cli.CommandError(f"sampling expects a finite --sampling_temperature > 0 (a float32, at most "
                                   f"{FLOAT32_MAX:.7g}) and no --beam_width, got {FLAGS.sampling_temperature} and "
                                   f"{FLAGS.beam_width}")
        sampling = {"temperature": FLAGS.sampling_temperature, "top_k": FLAGS.sampling_top_k, "seed": FLAGS.seed}
    else:
        ignored = [f"--{name}={FLAGS[name].value}" for name in ("sampling_top_k", "seed") if FLAGS[name].present]
        if ignored:  # they would be ignored: the search is not sampling
            raise cli.CommandError(f"{' and '.join(ignored)} without --sampling_temperature; expected them with "
                                   "--sampling_temperature T > 0 (sampling), or neither")
    # Imported after the flags are checked, so --help and usage errors skip TensorFlow's import.
    from zoo.inference import translate_stdin
    from zoo.inference.stream import OutputError

    try:
        translate_stdin(FLAGS.model, FLAGS.beam_width, FLAGS.batch_size, FLAGS.progress, sampling, FLAGS.shortlist,
                        FLAGS.batches_in_flight)
    except BrokenPipeError:  # e.g. `| head`: the reader is gone, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OutputError as error:  # e.g. a full disk: not a usage error
        raise cli.CommandError(str(error), status=1) from None
    except (OSError, ValueError, MissingOpLibraryError) as error:
        raise cli.CommandError(str(error)) from None
    startup.report("zoo-translate", "translation", "the other translations, and writing them out")


def run():
    with startup.exit_without_teardown():  # one-shot: no need to wait for TensorFlow's teardown
        cli.run(main, "zoo-translate", __doc__)


if __name__ == "__main__":
    run()
