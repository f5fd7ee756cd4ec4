"""`layer.precompute(value)`, `score` and `score_query` on symbolic tensors: nodes of the layer, whose
results follow its weights.

Computed while the functional model was being built, they held the weights of that moment as constants:
those weights never trained (concat: its value half, silently), the model's outputs drifted from the
layer's own after `fit`, and on JAX `predict` failed on an array that training deleted.
"""

import keras
import numpy as np
import pytest

from zoo.layers import AdditiveAttention, ConcatAttention, DotAttention, GeneralAttention, ReducedRankAttention

LAYERS = {
    "general": GeneralAttention,
    "reduced_rank": lambda: ReducedRankAttention(2),
    "concat": lambda: ConcatAttention(4),
    "additive": lambda: AdditiveAttention(4),
    "dot": DotAttention,
}


def functional_model(layer):
    query, value = keras.Input((3, 6)), keras.Input((4, 6))
    layer.build(query.shape, value.shape)
    keys = layer.precompute(value)
    assert tuple(keys.shape) == (None, 4, layer.keys_dim(6, 6))
    context, _ = layer(query, value, keys=keys)
    return keras.Model([query, value], context)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_precomputed_keys_train_and_follow_the_weights(name, tmp_path):
    rng = np.random.default_rng(0)
    query, value, target = (rng.normal(size=shape).astype("float32") for shape in [(8, 3, 6), (8, 4, 6), (8, 3, 6)])
    layer = LAYERS[name]()
    model = functional_model(layer)
    before = [np.array(w.numpy()) for w in layer.weights]
    model.compile(keras.optimizers.SGD(0.5), "mse")
    model.fit([query, value], target, epochs=3, verbose=0)
    for old, weight in zip(before, layer.weights):  # concat's kernel: its value half (rows :6) too
        assert not np.allclose(old[:6], weight.numpy()[:6]), weight.path
    outputs = model.predict([query, value], verbose=0)
    direct = keras.ops.convert_to_numpy(layer(query, value)[0])
    np.testing.assert_allclose(outputs, direct, atol=1e-5)
    model.save(tmp_path / "model.keras")
    reloaded = keras.models.load_model(tmp_path / "model.keras")
    assert len(reloaded.weights) == len(model.weights)  # the keys' node shares the layer's weights
    np.testing.assert_allclose(reloaded.predict([query, value], verbose=0), outputs, atol=1e-6)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_model_with_precomputed_keys_may_use_the_weights_too(name, tmp_path):
    # Keras checks a model's outputs against the outputs of a layer's first node: with the one-output
    # precompute node first, the weights of the call after it were "not connected to inputs".
    rng = np.random.default_rng(2)
    query, value = rng.normal(size=(8, 3, 6)).astype("float32"), rng.normal(size=(8, 4, 6)).astype("float32")
    layer = LAYERS[name]()
    query_input, value_input = keras.Input((3, 6)), keras.Input((4, 6))
    layer.build(query_input.shape, value_input.shape)
    context, weights = layer(query_input, value_input, keys=layer.precompute(value_input))
    model = keras.Model([query_input, value_input], [context, keras.layers.Activation("linear")(weights)])
    outputs = model.predict([query, value], verbose=0)
    for output, direct in zip(outputs, layer(query, value)):
        np.testing.assert_allclose(output, keras.ops.convert_to_numpy(direct), atol=1e-5)
    model.save(tmp_path / "model.keras")
    for output, again in zip(outputs, keras.models.load_model(tmp_path / "model.keras").predict([query, value], verbose=0)):
        np.testing.assert_allclose(again, output, atol=1e-6)


@pytest.mark.parametrize("name", ["reduced_rank", "concat", "additive"])
def test_scores_from_symbolic_inputs_train_every_weight(name):
    rng = np.random.default_rng(1)
    query, value = rng.normal(size=(8, 3, 6)).astype("float32"), rng.normal(size=(8, 4, 6)).astype("float32")
    layer = LAYERS[name]()
    query_input, value_input = keras.Input((3, 6)), keras.Input((4, 6))
    layer.build(query_input.shape, value_input.shape)
    keys = layer.precompute(value_input)
    if layer.dot_product_score:  # score(q, K) = dot_scores(score_query(q), K)
        scores = layer.dot_scores(layer.score_query(query_input), keys)
    else:
        scores = layer.score(query_input, keys)
    assert tuple(scores.shape) == (None, 3, 4)
    model = keras.Model([query_input, value_input], scores)
    before = [np.array(w.numpy()) for w in layer.weights]
    model.compile(keras.optimizers.SGD(0.5), "mse")
    model.fit([query, value], rng.normal(size=(8, 3, 4)).astype("float32"), epochs=2, verbose=0)
    for old, weight in zip(before, layer.weights):
        assert not np.allclose(old, weight.numpy()), weight.path
    expected = layer.score(query, layer.precompute(value))
    np.testing.assert_allclose(model.predict([query, value], verbose=0), keras.ops.convert_to_numpy(expected), atol=1e-5)


def test_symbolic_precompute_keeps_the_checks():
    layer = GeneralAttention()
    with pytest.raises(ValueError, match="before `precompute`"):
        layer.precompute(keras.Input((4, 6)))
    layer.build((None, 3, 6), (None, 4, 6))
    with pytest.raises(ValueError, match=r"value must have shape \(B, Tv, 6\)"):
        layer.precompute(keras.Input((4, 5)))
    with pytest.raises(ValueError, match=r"method must be None or one of \['precompute', 'score', 'score_query'\]"):
        layer(np.ones((2, 3, 6), "float32"), np.ones((2, 4, 6), "float32"), method="keys")
    with pytest.raises(ValueError, match="before `score`"):
        ConcatAttention(3).score(keras.Input((3, 6)), keras.Input((4, 3)))


def test_a_query_and_value_mask_pair_is_refused_by_name():
    # Keras' Attention layers take [query_mask, value_mask]; here it failed with "'list' object has no attribute 'dtype'".
    with pytest.raises(TypeError, match=r"mask must be one tensor \(B, Tv\) over the values \(the layer takes no "
                                        r"query mask\), received a list"):
        GeneralAttention()(np.ones((2, 4), "float32"), np.ones((2, 5, 8), "float32"),
                           mask=[np.ones((2,), bool), np.ones((2, 5), bool)])
