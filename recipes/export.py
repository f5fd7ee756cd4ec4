"""`zoo-export`: write a training workdir's best model as a TF Serving SavedModel.

    zoo-export --workdir DIR [--export_dir DIR] [--version N]

Writes `EXPORT_DIR/<version>/` (default `DIR/export/`, version = newest + 1) atomically,
with the signatures of docs/contract.md and the decoding defaults of the workdir's config.
Prints the path of the new version.
"""

import os
import sys

from absl import app, flags, logging

FLAGS = flags.FLAGS
flags.DEFINE_string("workdir", None, "A zoo-train workdir (best.keras, vocab/, config.json).")
flags.DEFINE_string("export_dir", None, "Model base path to write <version>/ into; default WORKDIR/export.")
flags.DEFINE_integer("version", None, "Version number; default: one more than the newest there (or 1).")
flags.DEFINE_integer("beam_width", None, "Beam width of serving_default; default: the config's.")
flags.DEFINE_float("length_penalty", None, "Length penalty of serving_default; default: the config's.")
flags.DEFINE_integer("max_source_length", None, "Sources are cut to this many tokens; default: the config's.")
flags.mark_flag_as_required("workdir")


def main(argv):
    if len(argv) > 1:
        sys.exit(f"zoo-export: unexpected arguments {argv[1:]}")
    if not os.path.isdir(FLAGS.workdir):
        sys.exit(f"zoo-export: --workdir {FLAGS.workdir!r} is not a directory; expected a zoo-train workdir")
    if FLAGS.version is not None and FLAGS.version < 1:
        sys.exit(f"zoo-export: --version must be a positive integer, got {FLAGS.version}")
    export_dir = FLAGS.export_dir or os.path.join(FLAGS.workdir, "export")
    if FLAGS.version is not None and os.path.exists(os.path.join(export_dir, str(FLAGS.version))):
        sys.exit(f"zoo-export: {os.path.join(export_dir, str(FLAGS.version))} exists: choose another --version")
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
        )
    except (FileNotFoundError, FileExistsError, ValueError) as error:
        sys.exit(f"zoo-export: {error}")
    print(path)


def run():
    app.run(main)


if __name__ == "__main__":
    run()
