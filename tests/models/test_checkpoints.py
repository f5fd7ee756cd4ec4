"""A TensorFlow checkpoint of a model alone holds every weight, the cells kept in lists included."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from test_models import SOURCE, TARGET_IN, tiny

import zoo.models
import zoo.models.encoder
import zoo.models.seq2seq


def built(name, **overrides):
    model = tiny(name, **overrides)
    model((SOURCE, TARGET_IN))
    return model


@pytest.mark.parametrize("name", zoo.models.presets())
def test_a_model_only_checkpoint_restores_every_weight(name, tmp_path):
    model = built(name, encoder_layers=2)
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "model"))
    stored = [key for key, _ in tf.train.list_variables(path) if key != "_CHECKPOINTABLE_OBJECT_GRAPH"]
    assert len(stored) == len(model.weights)
    other = tiny(name, encoder_layers=2)
    other((SOURCE, TARGET_IN))
    for weight in other.weights:
        weight.assign(tf.zeros_like(weight))
    tf.train.Checkpoint(model=other).read(path).assert_consumed()
    for saved, restored in zip(model.weights, other.weights):
        np.testing.assert_array_equal(restored.numpy(), saved.numpy(), err_msg=saved.path)


def test_the_keras_encoder_and_the_decoder_cells_are_in_it(tmp_path):
    model = built("luong_general", encoder_implementation="keras", decoder_layers=2)
    keys = [key for key, _ in tf.train.list_variables(tf.train.Checkpoint(model=model).write(str(tmp_path / "m")))]
    assert any(key.startswith("model/encoder/keras_layers_0/") for key in keys)
    assert any(key.startswith("model/cells_1/") for key in keys)
    assert any(key.startswith("model/bridges_1/") for key in keys)
    assert len(keys) - 1 == len(model.weights)


def test_a_checkpoint_written_before_the_lists_were_children_still_restores(tmp_path, monkeypatch):
    # Training checkpoints of earlier versions reached the listed cells only through the optimizer.
    model = built("luong_general")
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    with monkeypatch.context() as patch:
        patch.setattr(zoo.models.seq2seq, "with_listed_layers", lambda layer, children, save_type: children)
        patch.setattr(zoo.models.encoder, "with_listed_layers", lambda layer, children, save_type: children)
        path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "old"))
        assert not any("cells" in key for key, _ in tf.train.list_variables(path))
    other = built("luong_general")
    for weight in other.weights:
        weight.assign(tf.zeros_like(weight))
    other_optimizer = keras.optimizers.Adam()
    other_optimizer.build(other.trainable_variables)
    tf.train.Checkpoint(model=other, optimizer=other_optimizer).restore(path).assert_existing_objects_matched()
    for saved, restored in zip(model.weights, other.weights):
        np.testing.assert_array_equal(restored.numpy(), saved.numpy(), err_msg=saved.path)
