"""Training speed of a recipe on a parallel corpus: real tokens per second, as JSON.

    python benchmarks/train.py --recipe text --train_tsv /tmp/debian_fr/train.tsv --steps 200

Builds the recipe's tokenizers and model, runs `--warmup_steps` steps (graph tracing is
not training speed), then times `--steps` steps of `model.fit` and counts the real
(non-pad) source and target tokens of exactly the batches it trained on.
"""

import json
import os
import sys
import tempfile
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recipes import load_config  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("recipe", "text", "recipe name or .py config")
flags.DEFINE_string("train_tsv", None, "training pairs (default: the recipe's data)")
flags.DEFINE_string("model", None, "preset overriding the recipe's")
flags.DEFINE_integer("batch_size", None, "sentences per batch (default: the recipe's)")
flags.DEFINE_integer("steps", 100, "timed training steps")
flags.DEFINE_integer("warmup_steps", 5, "untimed steps first (tracing)")
flags.DEFINE_list("precision", ["float32", "mixed_bfloat16"], "compute policies timed one after the other")


def main(argv):
    import tensorflow as tf

    from zoo.training import trainer

    config = load_config(FLAGS.recipe)
    if FLAGS.train_tsv:
        config.train_tsv, config.dataset = FLAGS.train_tsv, "tsv"
    if FLAGS.model:
        config.model = FLAGS.model
    if FLAGS.batch_size:
        config.batch_size = FLAGS.batch_size
    pairs = trainer.load_data(config)["train"]
    source_tokenizer, target_tokenizer = trainer.build_tokenizers(config, pairs, tempfile.mkdtemp())
    dataset = trainer.make_train_dataset(config, pairs, source_tokenizer, target_tokenizer, seed=0).repeat()
    warmup = list(dataset.take(FLAGS.warmup_steps))
    timed = list(dataset.skip(FLAGS.warmup_steps).take(FLAGS.steps))  # the exact batches trained on below
    tokens = sum(int(tf.math.count_nonzero(x)) + int(tf.math.count_nonzero(y)) for (x, _), y in timed)
    spec = dataset.element_spec
    results = {}
    for precision in FLAGS.precision:
        config.precision = precision
        model = trainer.compile_model(
            trainer.build_model(config, source_tokenizer.vocab_size, target_tokenizer.vocab_size), config
        )
        model.fit(tf.data.Dataset.from_generator(lambda: iter(warmup), output_signature=spec), verbose=0)
        started = time.perf_counter()
        history = model.fit(tf.data.Dataset.from_generator(lambda: iter(timed), output_signature=spec), verbose=0)
        seconds = time.perf_counter() - started
        results[precision] = {
            "seconds": seconds, "steps_per_second": FLAGS.steps / seconds,
            "train_tokens_per_second": tokens / seconds, "loss": float(history.history["loss"][-1]),
        }
    print(json.dumps({
        "recipe": config.recipe, "preset": config.model, "params": int(model.count_params()),
        "batch_size": config.batch_size, "steps": FLAGS.steps, "tokens_per_step": tokens / FLAGS.steps,
        "train_pairs": len(pairs), "device": tf.config.list_logical_devices()[-1].device_type,
        "cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "precision": results,
        "speedup_of_last_over_first": results[FLAGS.precision[0]]["seconds"] / seconds,
    }, indent=1))


if __name__ == "__main__":
    app.run(main)
