"""`zoo-eval`: scores a model on a TSV test set and prints one JSON object.

    zoo-eval --model runs/dates/export --tsv test.tsv [--beam_width 5]

The JSON holds sacreBLEU `bleu` and `chrf` with their signatures, `exact_match`,
`sentences` and `sentences_per_second`.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's C++ INFO/WARNING lines are noise here

from absl import app, flags, logging

FLAGS = flags.FLAGS
flags.DEFINE_string("model", None, "a SavedModel, an export directory or a zoo-train workdir")
flags.DEFINE_string("tsv", None, "test pairs, source<TAB>target per line")
flags.DEFINE_integer("beam_width", None, "beam width; default: the export's own search")
flags.DEFINE_integer("batch_size", 64, "sentences translated at once")
flags.DEFINE_string("bleu_tokenize", None, "sacreBLEU tokenizer; default: the one of the training recipe, else 13a")
flags.mark_flags_as_required(["model", "tsv"])


def main(argv):
    if len(argv) > 1:
        print(f"zoo-eval: error: unexpected arguments {argv[1:]}; expected only --flags", file=sys.stderr)
        return 2
    if not FLAGS["verbosity"].present:
        logging.set_verbosity(logging.WARNING)
    from zoo.inference import evaluate_model

    try:
        results = evaluate_model(FLAGS.model, FLAGS.tsv, FLAGS.beam_width, FLAGS.batch_size, FLAGS.bleu_tokenize)
    except (ValueError, FileNotFoundError) as error:  # zoo.data.DataError is a ValueError
        print(f"zoo-eval: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(results))
    return 0


def _show_in_help():
    """--help lists the flags of the main module, which is the console script, not this file."""
    for flag in FLAGS.get_flags_for_module(__name__):
        FLAGS.register_key_flag_for_module(sys.argv[0], flag)


def run():
    _show_in_help()
    app.run(main)


if __name__ == "__main__":
    run()
