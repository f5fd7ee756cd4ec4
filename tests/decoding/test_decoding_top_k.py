"""The blocked top-k equals tf.math.top_k, values, indices and tie order (also for rows of a length known only
when it runs, that the blocks may fill exactly or not)."""

import numpy as np
import pytest
import tensorflow as tf

from zoo.decoding.top_k import blocked_top_k


@pytest.mark.parametrize(
    "shape,k", [((3, 5, 1000), 8), ((7, 8000), 10), ((2, 3, 999), 5), ((4, 300), 3), ((2, 3, 640), 4)]
)
def test_blocked_top_k_equals_top_k_with_ties(shape, k):
    values = np.random.default_rng(sum(shape)).normal(size=shape).astype("float32")
    values[..., 100:110] = 3.0  # ties within a block and across blocks
    values[..., shape[-1] - 1] = 3.0
    values[..., 0] = -np.inf
    expected = tf.math.top_k(values, k)
    signature = [tf.TensorSpec([None] * len(shape)), tf.TensorSpec([], tf.int32)]
    unknown_width = tf.function(blocked_top_k, input_signature=signature)
    for function in (blocked_top_k, tf.function(blocked_top_k, jit_compile=True), unknown_width):
        top_values, top_indices = function(values, k)
        np.testing.assert_array_equal(top_values.numpy(), expected.values.numpy())
        np.testing.assert_array_equal(top_indices.numpy(), expected.indices.numpy())


def test_every_value_in_one_block():
    values = np.full((2, 1000), -5.0, "float32")
    values[:, 130:138] = np.arange(8)[None, ::-1]  # the 8 best all in block 2
    top_values, top_indices = blocked_top_k(values, 8)
    np.testing.assert_array_equal(top_indices.numpy(), np.tile(np.arange(130, 138), (2, 1)))
    np.testing.assert_array_equal(top_values.numpy(), np.tile(np.arange(8)[::-1], (2, 1)))
