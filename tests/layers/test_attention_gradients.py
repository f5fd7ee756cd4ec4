"""Finite-difference gradient checks of the attention layers, in float64.

The loss `sum(context * r1) + sum(weights * r2)` (fixed random `r1`, `r2`) is
differentiated by the backend (TensorFlow's GradientTape or `jax.grad`, through
`layer.stateless_call`) and by central differences, w.r.t. the query, the values
and every weight. The batch holds a padded row and an all-masked row, whose
gradients must be finite (exactly 0 for masked values).
"""

import keras
import numpy as np
import pytest

import zoo.layers
from zoo.layers import AdditiveAttention, ConcatAttention, DotAttention

B, TQ, TV, DQ, DV = 3, 2, 5, 3, 4
LENGTHS = (5, 3, 0)


@pytest.fixture(autouse=True)
def _float64_on_jax():
    """JAX truncates float64 to float32 unless x64 is on: turn it on for these tests only."""
    if keras.backend.backend() != "jax":
        yield
        return
    import jax

    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def backend_gradients(loss_fn, params):
    """d loss_fn(params) / d params, params a list of float64 numpy arrays."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        tensors = [tf.constant(p) for p in params]
        with tf.GradientTape() as tape:
            tape.watch(tensors)
            loss = loss_fn(tensors)
        return [np.asarray(g) for g in tape.gradient(loss, tensors)]
    if backend == "jax":
        import jax

        return [np.asarray(g) for g in jax.grad(loss_fn)([jax.numpy.asarray(p) for p in params])]
    pytest.skip(f"no gradient helper for the {backend} backend")


def tanh_is_float64():
    # Keras' type promotion maps float64 to float32 on JAX, so there `ops.tanh` of a
    # float64 tensor is only float32-accurate; matmul and softmax keep float64.
    tanh = keras.ops.tanh(keras.ops.ones((1,), "float64"))
    return keras.backend.standardize_dtype(tanh.dtype) == "float64"


def central_differences(loss_fn, params, epsilon):
    grads = []
    for k, p in enumerate(params):
        g = np.zeros_like(p)
        for index in np.ndindex(p.shape):
            plus = [q.copy() for q in params]
            minus = [q.copy() for q in params]
            plus[k][index] += epsilon
            minus[k][index] -= epsilon
            g[index] = (float(loss_fn(plus)) - float(loss_fn(minus))) / (2 * epsilon)
        grads.append(g)
    return grads


# Every registered score; dot with `scale=True`, whose path holds the unscaled one.
SCORES = [(name, {"scale": True} if name == "dot" else {}) for name in zoo.layers.names()]


@pytest.mark.parametrize("name, extra", SCORES, ids=[name for name, _ in SCORES])
def test_gradients_match_central_differences(name, extra):
    layer = zoo.layers.get(name, {"units": 3, "rank": 2}, dtype="float64", **extra)
    cls = type(layer)
    dq = DV if cls is DotAttention else DQ
    rng = np.random.default_rng(0)
    query = rng.normal(size=(B, TQ, dq))
    value = rng.normal(size=(B, TV, DV))
    mask = np.arange(TV)[None, :] < np.array(LENGTHS)[:, None]
    r_context = rng.normal(size=(B, TQ, DV))
    r_weights = rng.normal(size=(B, TQ, TV))

    layer(query, value, mask=mask)
    for w in layer.trainable_weights:  # O(1) weights so that tanh is not linear
        w.assign(rng.normal(size=w.shape))
    num_weights = len(layer.trainable_weights)
    non_trainable = [v.value for v in layer.non_trainable_variables]

    def loss_fn(params):
        (context, weights), _ = layer.stateless_call(
            params[:num_weights], non_trainable, params[num_weights], params[num_weights + 1], mask=mask
        )
        assert keras.backend.standardize_dtype(context.dtype) == "float64"
        return keras.ops.sum(context * r_context) + keras.ops.sum(weights * r_weights)

    params = [keras.ops.convert_to_numpy(w).astype("float64") for w in layer.trainable_weights]
    params += [query, value]
    names = [w.name for w in layer.trainable_weights] + ["query", "value"]

    if cls in (AdditiveAttention, ConcatAttention) and not tanh_is_float64():
        # float32-accurate scores: a wider step keeps the rounding noise (1e-7 / epsilon) small.
        epsilon, tolerance, atol = 1e-3, 1e-3, 1e-4
    else:
        epsilon, tolerance, atol = 1e-6, 1e-6, 1e-8
    analytic = backend_gradients(loss_fn, params)
    numeric = central_differences(loss_fn, params, epsilon)
    for name, a, n in zip(names, analytic, numeric):
        assert np.all(np.isfinite(a)), f"d loss / d {name} is not finite"
        relative_error = np.linalg.norm(a - n) / max(np.linalg.norm(n), 1e-12)
        assert relative_error < tolerance, f"d loss / d {name}: relative error {relative_error:.2e}"
        np.testing.assert_allclose(a, n, rtol=10 * tolerance, atol=atol, err_msg=f"d loss / d {name}")
        assert np.linalg.norm(a) > 1e-3, f"d loss / d {name} vanishes: the check would be vacuous"

    d_value = analytic[-1]
    assert np.all(d_value[~mask] == 0), "masked values must get exactly zero gradient"
    assert np.all(analytic[-2][np.array(LENGTHS) == 0] == 0), "an all-masked row has no query gradient"
