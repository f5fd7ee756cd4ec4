"""`zoo-eval`: scores a model on a TSV test set and prints one JSON object.

    zoo-eval --model runs/dates/export --tsv test.tsv [--beam_width 5] [--shortlist]

The JSON holds sacreBLEU `bleu` and `chrf` with their signatures, `exact_match`,
`sentences` and `sentences_per_second`. A TSV line may give several references,
`source<TAB>ref1<TAB>ref2...`: BLEU and chrF then use them all (`nrefs:N` in the signatures).
`--profile_startup` prints to stderr where the time from the process start went (`zoo.startup`).
"""

from zoo import startup  # first: the profile's first phase ends at its import

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's C++ INFO/WARNING lines are noise here

from absl import flags, logging

from zoo import cli
from zoo.constants import MissingOpLibraryError

FLAGS = flags.FLAGS
flags.DEFINE_string("model", None, "a SavedModel, an export directory or a zoo-train workdir")
flags.DEFINE_string("tsv", None, "test set, source<TAB>reference per line (more <TAB>reference columns: "
                    "multi-reference BLEU/chrF)")
flags.DEFINE_integer("beam_width", None, "beam width (1: greedy search); default: the export's own search",
                     lower_bound=1)
flags.DEFINE_integer("batch_size", 64, "sentences translated at once", lower_bound=1)
flags.DEFINE_integer("batches_in_flight", 2, "batches translated at once, each on a thread of its own (a search "
                     "leaves cores idle that a second batch fills; the same translations)", lower_bound=1)
flags.DEFINE_string("bleu_tokenize", None, "sacreBLEU tokenizer; default: the one of the training recipe, else 13a")
flags.DEFINE_bool("profile_startup", False, startup.FLAG_HELP)
flags.DEFINE_bool("shortlist", None, "vocabulary selection (a workdir's vocab/shortlist.npz) or not (--noshortlist); "
                  "default: as the model was trained or exported")
flags.mark_flags_as_required(["model", "tsv"])


def main(argv):
    del argv  # cli.run refuses positional arguments
    if FLAGS.profile_startup:
        startup.enable()
    cli.check_standard_streams("stdout")
    if not FLAGS["verbosity"].present:
        logging.set_verbosity(logging.WARNING)
    from zoo.inference import evaluate_model

    startup.mark("import_evaluation", "zoo.inference.evaluation: sacreBLEU and the TSV reader")

    try:
        results = evaluate_model(FLAGS.model, FLAGS.tsv, FLAGS.beam_width, FLAGS.batch_size, FLAGS.bleu_tokenize,
                                 FLAGS.shortlist, FLAGS.batches_in_flight)
    except (ValueError, OSError, MissingOpLibraryError) as error:  # zoo.data.DataError is a ValueError
        raise cli.CommandError(str(error)) from None
    try:
        sys.stdout.write(json.dumps(results) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `| head -c 100`: the reader is gone, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError as error:  # e.g. a full disk
        raise cli.CommandError(f"cannot write the results to stdout ({error.strerror or error}); "
                               "expected a writable standard output", status=1) from None
    startup.report("zoo-eval")


def run():
    with startup.exit_without_teardown():  # one-shot: no need to wait for TensorFlow's teardown
        cli.run(main, "zoo-eval", __doc__)


if __name__ == "__main__":
    run()
