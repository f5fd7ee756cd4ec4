"""CrossReplicaAdam's fused update (ResourceApplyAdam) against Keras' own Adam."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.training.optimizer import CrossReplicaAdam

SHAPES = [(30, 8), (8, 16), (16,)]


def initial_values():
    rng = np.random.default_rng(0)
    return [rng.normal(size=shape).astype(np.float32) for shape in SHAPES]


def run(optimizer, gradients, sparse_first=False):
    variables = [tf.Variable(value) for value in initial_values()]
    optimizer.build(variables)

    @tf.function
    def apply(grads):
        if sparse_first:  # an embedding's gradient: rows 3 and 7 only
            grads = [tf.IndexedSlices(tf.gather(grads[0], [3, 7]), tf.constant([3, 7]), tf.constant(SHAPES[0])),
                     *grads[1:]]
        optimizer.apply(grads, variables)

    for grads in gradients:
        apply(grads)
    return [v.numpy() for v in variables]


@pytest.mark.parametrize("sparse_first", [False, True])
@pytest.mark.parametrize("clipping", [{}, {"global_clipnorm": 1.0}, {"clipnorm": 0.5}])
def test_the_fused_update_is_keras_adam(clipping, sparse_first):
    rng = np.random.default_rng(1)
    gradients = [[tf.constant(rng.normal(size=shape).astype(np.float32)) for shape in SHAPES] for _ in range(6)]
    expected = run(keras.optimizers.Adam(0.05, **clipping), gradients, sparse_first)
    fused = run(CrossReplicaAdam(0.05, **clipping), gradients, sparse_first)
    for want, got, start in zip(expected, fused, initial_values()):
        assert np.max(np.abs(want - start)) > 0.05  # the steps moved the weights
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # float32 rounding of 0.05-sized steps
