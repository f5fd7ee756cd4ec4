"""`zoo-export`: write a training workdir's best model as a TF Serving SavedModel.

    zoo-export --workdir DIR [--export_dir DIR] [--version N] [--shortlist]

Writes `EXPORT_DIR/<version>/` (default `DIR/export/`, version = newest + 1) atomically,
with the signatures of docs/contract.md and the decoding defaults of the workdir's config;
with `--shortlist` every signature decodes with the workdir's vocabulary selection table.
Prints the path of the new version.
"""

import math
import os

from absl import flags, logging

from zoo import cli
from zoo.constants import DEFAULT_MAX_BEAM_WIDTH, DEFAULT_MAX_SOURCE_LENGTH, MAX_LENGTH_PENALTY, MissingOpLibraryError

FLAGS = flags.FLAGS
flags.DEFINE_string("workdir", None, "A zoo-train workdir (best.keras, vocab/, config.json).")
flags.DEFINE_string("export_dir", None, "Model base path to write <version>/ into; default WORKDIR/export.")
flags.DEFINE_integer("version", None, "Version number; default: one more than the newest there (or 1).",
                     lower_bound=1)
flags.DEFINE_integer("beam_width", None, "Beam width of serving_default, at most the export's largest "
                     f"({DEFAULT_MAX_BEAM_WIDTH}); default: the config's.", lower_bound=1, upper_bound=DEFAULT_MAX_BEAM_WIDTH)
flags.DEFINE_float("length_penalty", None, "Length penalty of serving_default, from 0 to "
                   f"{MAX_LENGTH_PENALTY:g}; default: the config's.", lower_bound=0.0, upper_bound=MAX_LENGTH_PENALTY)
flags.register_validator("length_penalty", lambda value: value is None or math.isfinite(value),
                         "--length_penalty must be a finite number")
flags.DEFINE_integer("max_source_length", None, "Sources are cut to this many tokens; default: the training's "
                     f"max_source_length, at least {DEFAULT_MAX_SOURCE_LENGTH}.",
                     lower_bound=1)
flags.DEFINE_bool("shortlist", None, "Decode every signature with the workdir's vocabulary selection table "
                  "(vocab/shortlist.npz), or not (--noshortlist); default: the config's (shortlist_k > 0).")
flags.mark_flag_as_required("workdir")


def main(argv):
    del argv  # cli.run refuses positional arguments
    if not os.path.isdir(FLAGS.workdir):
        raise cli.CommandError(f"--workdir {FLAGS.workdir!r} is not a directory; expected a zoo-train workdir")
    export_dir = cli.writable_directory(FLAGS.export_dir or os.path.join(FLAGS.workdir, "export"), "--export_dir")
    if FLAGS.version is not None and os.path.exists(os.path.join(export_dir, str(FLAGS.version))):
        raise cli.CommandError(f"{os.path.join(export_dir, str(FLAGS.version))} exists: choose another --version")
    logging.set_verbosity(logging.WARNING)  # TensorFlow's INFO lines about tracing are noise here
    # Imported after the flags are checked, so --help and usage errors skip TensorFlow's import.
    from zoo.export import export_workdir

    try:
        path = export_workdir(
            FLAGS.workdir,
            export_dir,
            FLAGS.version,
            beam_width=FLAGS.beam_width,
            length_penalty=FLAGS.length_penalty,
            max_source_length=FLAGS.max_source_length,
            shortlist=FLAGS.shortlist,
        )
    except (OSError, ValueError, MissingOpLibraryError) as error:  # missing files or ops, a full disk, a bad config
        raise cli.CommandError(str(error)) from None
    print(path)


def run():
    cli.run(main, "zoo-export", __doc__)


if __name__ == "__main__":
    run()
