"""Run as a script: 20 training steps on one CPU device, then on two logical CPU replicas.

Prints JSON: the replica counts, both loss trajectories, and the largest difference of
any weight after the 20 steps. With `--resume WORKDIR` instead: `zoo-train`'s loop for one
epoch on one device, then resumed for a second on two replicas; prints both results. The
logical devices must exist before TensorFlow starts, hence a process of its own.
"""

import json
import os
import random
import sys
import tempfile

import tensorflow as tf

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2
)

import keras  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from recipes import load_config  # noqa: E402
from zoo.training import distribute, trainer  # noqa: E402

STEPS = 20


def train(strategy, config, pairs, tokenizers, static_shapes=True):
    # A fresh dataset after the global seed (the shuffle reads it too), as the trainer does:
    # the same batches in the same order for both runs.
    keras.utils.set_random_seed(0)
    dataset = trainer.make_train_dataset(config, pairs, *tokenizers, seed=0, static_shapes=static_shapes)
    with strategy.scope():
        model = trainer.build_model(config, tokenizers[0].vocab_size, tokenizers[1].vocab_size)
        trainer.compile_model(model, config)
        distribute.build_for_fit(model, next(iter(dataset)))  # as zoo-train does: a batch may split unevenly
        history = model.fit(dataset.repeat(), steps_per_epoch=1, epochs=STEPS, verbose=0)
        replicas = model.distribute_strategy.num_replicas_in_sync  # what fit trained on
    assert replicas == strategy.num_replicas_in_sync, (replicas, strategy)
    return history.history["loss"], model.get_weights()


def resume(workdir):
    from zoo.training import train_and_evaluate

    config = load_config("dates_bahdanau")
    config.update(dict(dates_train_size=300, dates_dev_size=8, embedding_dim=16, encoder_units=16, decoder_units=32,
                       attention_units=16, output_units=16, batch_size=32, final_beam_width=1, num_samples=1,
                       verbose=0, export=False, strategy="one_device", num_epochs=1))
    first = train_and_evaluate(config, workdir, print_fn=lambda line: None)
    config.update(strategy="mirrored", num_epochs=2)
    second = train_and_evaluate(config, workdir, print_fn=lambda line: None)
    keys = ("strategy", "replicas", "train_steps", "resumed_from_step", "epochs")
    print(json.dumps([{key: run[key] for key in keys} for run in (first, second)]))


def main():
    config = load_config("dates_bahdanau")
    config.update(dict(embedding_dim=16, encoder_units=16, decoder_units=32, attention_units=16, output_units=16,
                       batch_size=32, learning_rate=1e-2, warmup_steps=0, max_source_length=16, max_target_length=16,
                       clipnorm=0.05))  # so small that clipping acts at every step
    # Reversal of 2-14 letters: the two halves of a batch hold different numbers of target tokens.
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 14))) for _ in range(400)]
    pairs = [(word, word[::-1]) for word in words]
    tokenizers = trainer.build_tokenizers(config, pairs, tempfile.mkdtemp())
    one = distribute.resolve_strategy("one_device")
    mirrored = distribute.resolve_strategy("mirrored")
    report = {"replicas": [one.num_replicas_in_sync, mirrored.num_replicas_in_sync]}
    # Static shapes: every batch splits evenly. Per-batch shapes (replicas of a CPU): a bucket's partial
    # batch of any size, odd or smaller than the replicas, splits unevenly.
    for name, static_shapes, batch_size in (("static", True, 32), ("per_batch", False, 33)):
        config.batch_size = batch_size
        one_losses, one_weights = train(one, config, pairs, tokenizers, static_shapes)
        mirrored_losses, mirrored_weights = train(mirrored, config, pairs, tokenizers, static_shapes)
        report[name] = {
            "one_device": one_losses, "mirrored": mirrored_losses,
            "max_weight_difference": max(float(np.abs(a - b).max()) for a, b in zip(one_weights, mirrored_weights)),
            "batch_rows": sorted({int(x[0].shape[0]) for x, _ in trainer.make_train_dataset(
                config, pairs, *tokenizers, seed=0, static_shapes=static_shapes)}),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--resume"]:
        resume(sys.argv[2])
    else:
        main()
