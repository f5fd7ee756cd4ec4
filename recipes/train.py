"""`zoo-train`: trains a recipe in a workdir, resumably, and reports dev BLEU/chrF.

    zoo-train --recipe dates_bahdanau --workdir runs/dates
    zoo-train --recipe text --train_tsv train.tsv --dev_tsv dev.tsv --workdir runs/text \
        --max_train_minutes 20 --config.batch_size=32
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's C++ INFO/WARNING lines are noise here

from absl import app, flags, logging
from ml_collections import config_flags

from recipes.registry import load_config, recipe_names

FLAGS = flags.FLAGS
flags.DEFINE_string("recipe", "dates_bahdanau", f"a recipe name ({', '.join(recipe_names())}) or a .py config file")
flags.DEFINE_string("workdir", None, "the run's directory: checkpoints, logs, results.json, export/")
flags.DEFINE_string("model", None, "model preset, overrides the recipe's (zoo.models.presets())")
flags.DEFINE_string("train_tsv", None, "training pairs, source<TAB>target per line")
flags.DEFINE_string("dev_tsv", None, "dev pairs scored with sacreBLEU/chrF")
flags.DEFINE_integer("train_steps", None, "stop after this many optimizer steps in all")
flags.DEFINE_float("max_train_minutes", None, "wall-clock budget; stops cleanly, evaluates and exports")
flags.DEFINE_integer("seed", None, "initialization and shuffling seed")


def _recipe_from_argv(argv):
    """The value of --recipe, read before flag parsing so that --config.* applies to it."""
    for i, arg in enumerate(argv):
        if arg.startswith("--recipe="):
            return arg.split("=", 1)[1]
        if arg == "--recipe" and i + 1 < len(argv):
            return argv[i + 1]
    return FLAGS["recipe"].default


def _fail(message):
    print(f"zoo-train: error: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) > 1:
        _fail(f"unexpected arguments {argv[1:]}; expected only --flags")
    if not FLAGS["verbosity"].present:
        logging.set_verbosity(logging.WARNING)  # TensorFlow's INFO lines drown the progress bars
    from zoo.data import DataError

    from recipes.pipeline import train_and_export

    config = FLAGS.config
    for field in ("model", "train_tsv", "dev_tsv", "train_steps", "max_train_minutes", "seed"):
        if FLAGS[field].value is not None:
            config[field] = FLAGS[field].value
    if FLAGS.train_tsv:
        config.dataset = "tsv"
    try:
        train_and_export(config, FLAGS.workdir)
    except (DataError, ValueError, FileNotFoundError) as error:
        logging.debug("zoo-train failed", exc_info=True)
        _fail(str(error))


def _show_in_help():
    """--help lists the flags of the main module, which is the console script, not this file."""
    for flag in FLAGS.get_flags_for_module(__name__):
        FLAGS.register_key_flag_for_module(sys.argv[0], flag)


def run():
    try:
        config = load_config(_recipe_from_argv(sys.argv))
    except ValueError as error:
        _fail(str(error))
    config_flags.DEFINE_config_dict("config", config, "the recipe's fields: --config.<field>=<value>")
    flags.mark_flag_as_required("workdir")
    _show_in_help()
    app.run(main)


if __name__ == "__main__":
    run()
