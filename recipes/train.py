"""`zoo-train`: trains a recipe in a workdir, resumably, and reports dev BLEU/chrF.

    zoo-train --recipe dates_bahdanau --workdir runs/dates
    zoo-train --recipe text --train_tsv train.tsv --dev_tsv dev.tsv --workdir runs/text \
        --max_train_minutes 20 --config.batch_size=32
"""

import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's C++ INFO/WARNING lines are noise here

from absl import flags, logging

from recipes import recipe_flags
from zoo import cli

FLAGS = flags.FLAGS
recipe_flags.define_recipe_flag()
flags.DEFINE_string("workdir", None, "the run's directory: checkpoints, logs, results.json, export/")
flags.DEFINE_string("model", None, "model preset, overrides the recipe's (zoo.models.presets())")
flags.DEFINE_string("train_tsv", None, "training pairs, source<TAB>target per line")
flags.DEFINE_string("dev_tsv", None, "dev pairs scored with sacreBLEU/chrF")
flags.DEFINE_integer("train_steps", None, "stop after this many optimizer steps in all", lower_bound=1)
flags.DEFINE_float("max_train_minutes", None,
                   "wall-clock budget up to the end of training, over the workdir's runs (the final evaluation "
                   "and the export follow)",
                   lower_bound=0.0)
flags.DEFINE_integer("seed", None, "initialization and shuffling seed")
flags.mark_flag_as_required("workdir")


def main(argv):
    del argv  # cli.run refuses positional arguments
    if not FLAGS["verbosity"].present:
        logging.set_verbosity(logging.WARNING)  # TensorFlow's INFO lines drown the progress bars
    from zoo.config_checks import validate_config

    config = FLAGS.config
    for field in ("train_tsv", "dev_tsv"):  # an unset shell variable would otherwise fall back to other data
        if FLAGS[field].value == "":
            raise cli.CommandError(f"--{field}: empty path; expected a file of source<TAB>target lines")
    for field in ("model", "train_tsv", "dev_tsv", "train_steps", "max_train_minutes", "seed"):
        if FLAGS[field].value is not None:
            config[field] = FLAGS[field].value
    if FLAGS.train_tsv:
        config.dataset = "tsv"
    try:  # every field on its own first, in a second, before TensorFlow loads (the model check needs Keras)
        validate_config(config, model=False)
    except ValueError as error:
        raise cli.CommandError(str(error)) from None
    import tensorflow as tf

    from zoo.data import DataError
    from zoo.training import distribute

    from recipes.pipeline import train_and_export

    try:
        distribute.split_cpu_as_configured(config)  # before TensorFlow starts (validation builds layers)
        validate_config(config)  # before the workdir is created: a refused run leaves nothing behind
        cli.writable_directory(FLAGS.workdir, "--workdir")
        results = train_and_export(config, FLAGS.workdir)
    except (DataError, ValueError, FileNotFoundError) as error:
        logging.debug("zoo-train failed", exc_info=True)
        raise cli.CommandError(str(error)) from None
    except (OSError, tf.errors.PermissionDeniedError, tf.errors.ResourceExhaustedError) as error:
        logging.debug("zoo-train failed", exc_info=True)
        raise run_failure(error, FLAGS.workdir) from None
    if results.get("export_error"):
        best = os.path.join(FLAGS.workdir, "best.keras")
        raise cli.CommandError(f"export failed: {results['export_error']}; the trained model is in {best}: "
                               f"zoo-export --workdir {FLAGS.workdir} exports it", status=1)


def run_failure(error, workdir):
    """The `CommandError` of an error raised while the run trains and writes: a device out of memory,
    or a workdir that became unwritable (a read-only subdirectory, a full disk)."""
    message = getattr(error, "message", None) or str(error)
    oom = re.search(r"OOM when allocating[^\n]*", message)
    if oom:  # TensorFlow's ResourceExhaustedError is also a full device memory, not only a full disk
        return cli.CommandError(f"out of memory: {oom.group(0)}; expected a smaller batch_size or batch_tokens, "
                                "max_source_length and max_target_length, or model sizes", status=1)
    message = re.sub(r"\{\{function_node [^}]*\}\}\s*|\s*\[Op:\w+\]$", "", message)  # TensorFlow's op names
    return cli.CommandError(f"cannot write in --workdir {workdir}: {message}", status=1)


def run(argv=None):
    argv = sys.argv if argv is None else argv
    try:
        recipe, config = recipe_flags.define_config_flag(argv)
    except cli.CommandError as error:
        cli.fail("zoo-train", str(error), error.status)
    cli.run(main, "zoo-train", __doc__, key_flags=[recipe_flags.CONFIG_FLAG], argv=argv,
            full_extra=lambda: recipe_flags.fields_help(config, recipe),
            interrupted="the same command resumes from the last checkpoint saved in the workdir")


if __name__ == "__main__":
    run()
