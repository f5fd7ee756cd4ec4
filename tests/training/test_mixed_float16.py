"""A `mixed_float16` run trains with loss scaling and exports a model that serves float32."""

import os

import numpy as np
import pytest
import tensorflow as tf

import recipes

TINY = dict(
    dates_train_size=300, dates_dev_size=8, embedding_dim=16, encoder_units=16, decoder_units=32,
    attention_units=16, output_units=16, batch_size=32, learning_rate=1e-2, warmup_steps=2, final_beam_width=2,
    num_samples=1, verbose=0, early_stopping_patience=0, precision="mixed_float16", train_steps=6,
)  # fmt: skip
SOURCES = ["12 March 2003", "le 5 juin 1999"]


def test_mixed_float16_trains_with_loss_scaling_and_serves_float32(tmp_path):
    config = recipes.load_config("dates_bahdanau")
    config.update(TINY)
    workdir = str(tmp_path / "run")
    results = recipes.train_and_export(config, workdir, print_fn=lambda line: None)
    assert results["precision"] == "mixed_float16" and results["train_steps"] == 6
    assert np.isfinite(results["evaluations"][-1]["loss"])
    saved = tf.train.load_checkpoint(os.path.join(workdir, "checkpoints")).get_variable_to_shape_map()
    assert any("dynamic_scale" in name for name in saved)  # the loss scale is part of the training state
    assert results["export_path"] and "export_error" not in results

    loaded = tf.saved_model.load(results["export_path"])
    for name, function in loaded.signatures.items():
        for output, spec in function.structured_outputs.items():
            assert spec.dtype in (tf.float32, tf.string), (name, output, spec.dtype)
    beam = loaded.signatures["beam_search"](source=tf.constant(SOURCES), beam_width=tf.constant(2),
                                            num_hypotheses=tf.constant(1), length_penalty=tf.constant(0.6))
    assert beam["log_probs"].dtype == tf.float32 and np.all(np.isfinite(beam["log_probs"].numpy()))
    assert beam["attention"].dtype == tf.float32 and np.all(np.isfinite(beam["attention"].numpy()))
    scored = loaded.signatures["score"](source=tf.constant(SOURCES), target=tf.constant(["2003-03-12", "1999-06-05"]))
    assert scored["log_prob"].dtype == tf.float32 and np.all(scored["log_prob"].numpy() < 0)

    # Loss scaling keeps other optimizer variables: a resume in float32 is refused by name, not TensorFlow's
    # "expected dtype float does not equal original dtype int64" from inside the restore.
    before = workdir_files(workdir)
    config.update(precision="float32", train_steps=8)
    with pytest.raises(ValueError, match=r"trained with mixed_float16's loss scaling, this run is without it "
                                         r"\(float32, precision='float32'\)"):
        recipes.train_and_export(config, workdir, print_fn=lambda line: None)
    assert workdir_files(workdir) == before  # config.json too: a refused run leaves the workdir as it was


def workdir_files(workdir):
    """Every file of `workdir` (the logs aside) and its bytes."""
    files = {}
    for root, _, names in os.walk(workdir):
        for name in names:
            path = os.path.join(root, name)
            if os.sep + "logs" + os.sep not in path:
                with open(path, "rb") as f:
                    files[os.path.relpath(path, workdir)] = f.read()
    return files
