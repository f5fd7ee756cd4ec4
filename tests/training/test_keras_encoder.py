"""`encoder_implementation="keras"`: Keras' own LSTM/GRU layers (cuDNN on a GPU) train, resume and export."""

import os

import numpy as np
import pytest
import tensorflow as tf

import recipes
from zoo.decoding import Greedy, decode, sequence_log_prob
from zoo.models.workdir import decoding_settings, load_workdir
from zoo.training import distribute
from zoo.training.inputs import build_model
from zoo.training.optimization import compile_model
from zoo.config_checks import config_problems

TINY = dict(
    dates_train_size=300, dates_dev_size=8, embedding_dim=16, encoder_units=16, decoder_units=32,
    attention_units=16, output_units=16, batch_size=32, learning_rate=1e-2, warmup_steps=2, final_beam_width=1,
    num_samples=1, verbose=0, early_stopping_patience=0, encoder_implementation="keras", train_steps=4,
)  # fmt: skip
SOURCES = ["12 March 2003", "le 5 juin 1999", "3 de marzo de 2021"]


def test_a_keras_encoder_run_trains_resumes_and_exports_the_same_translations(tmp_path):
    config = recipes.load_config("dates_bahdanau")
    config.update(TINY)
    workdir = str(tmp_path / "run")
    first = recipes.train_and_export(config, workdir, print_fn=lambda line: None)
    assert first["train_steps"] == 4 and np.isfinite(first["evaluations"][-1]["loss"])
    reader = tf.train.load_checkpoint(os.path.join(workdir, "checkpoints"))
    assert int(reader.get_tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE")) == 4

    model, source_tokenizer, target_tokenizer, saved_config = load_workdir(workdir)
    # The checkpoint restores into a fresh model of the same config, as a resumed run restores it.
    fresh = compile_model(build_model(config, source_tokenizer.vocab_size, target_tokenizer.vocab_size), config)
    latest = tf.train.latest_checkpoint(os.path.join(workdir, "checkpoints"))
    tf.train.Checkpoint(model=fresh, optimizer=fresh.optimizer).read(latest).assert_existing_objects_matched()
    keys = [key for key in reader.get_variable_to_shape_map() if key.startswith("optimizer/_trainable_variables/")]
    encoder = {id(v) for v in fresh.encoder.weights}
    restored = [fresh.optimizer._trainable_variables[int(key.split("/")[2])] for key in keys]
    assert encoder <= {id(v) for v in restored}  # (the others are saved under the model's own paths)
    for key, variable in zip(keys, restored):
        np.testing.assert_array_equal(variable.numpy(), reader.get_tensor(key), err_msg=variable.path)
    assert model.encoder_implementation == "keras"
    assert any("encoder/bidirectional_0/forward_" in v.path for v in model.weights)  # Keras' own layers
    source_ids = source_tokenizer.encode(tf.constant(SOURCES)).to_tensor()
    limit = decoding_settings(saved_config).get("max_target_length")  # as the export caps its searches
    expected = target_tokenizer.decode(decode(model, source_ids, Greedy(), max_length=limit).ids[:, 0]).numpy()
    # The export traced the zoo's own cells with the trained weights (a graph for any device).
    loaded = tf.saved_model.load(first["export_path"])
    served = loaded.signatures["greedy"](source=tf.constant(SOURCES))["translation"].numpy()
    assert list(served) == list(expected), (served, expected)
    targets = ["2003-03-12", "1999-06-05", "2021-03-03"]
    scored = loaded.signatures["score"](source=tf.constant(SOURCES), target=tf.constant(targets))["log_prob"]
    own = sequence_log_prob(model, source_ids, target_tokenizer.encode(tf.constant(targets)).to_tensor())
    np.testing.assert_allclose(scored.numpy(), own.numpy(), rtol=1e-4)


def test_keras_recurrent_layers_are_never_compiled_with_xla():
    strategy = tf.distribute.get_strategy()
    assert distribute.resolve_jit_compile("auto", strategy, "keras") is False
    assert distribute.resolve_jit_compile("false", strategy, "keras") is False
    with pytest.raises(ValueError, match="jit_compile=true cannot compile encoder_implementation='keras'"):
        distribute.resolve_jit_compile("true", strategy, "keras")


def test_a_bad_encoder_implementation_is_named():
    config = recipes.load_config("dates_bahdanau")
    config.update(TINY, encoder_implementation="cudnn")
    with pytest.raises(ValueError, match="encoder_implementation"):
        recipes.train_and_export(config, "/nonexistent/never-written", print_fn=lambda line: None)
    config.update(encoder_implementation="keras", jit_compile="true")  # refused before anything is written
    assert config_problems(config) == [
        "jit_compile='true' (expected auto or false with encoder_implementation='keras': Keras' LSTM/GRU layers "
        "run cuDNN's kernels, which XLA cannot compile)"
    ]
