"""`zoo.layers.linear.linear`: the last-axis product of the models' time loops."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.layers.linear import linear


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 5), (2, 4, 3, 5)])
@pytest.mark.parametrize("kernel_shape", [(5, 7), (5,)])
def test_linear_is_the_last_axis_product(shape, kernel_shape):
    rng = np.random.default_rng(0)
    x, kernel = rng.normal(size=shape).astype("float32"), rng.normal(size=kernel_shape).astype("float32")
    np.testing.assert_allclose(np.asarray(linear(x, kernel)), np.tensordot(x, kernel, axes=[[-1], [0]]),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="checks the TensorFlow graph it lowers to")
def test_linear_runs_as_plain_matmuls():
    # TensorFlow's CPU einsum with an ellipsis made a reference training step ~40x slower.
    @tf.function(input_signature=[tf.TensorSpec([None, None, 5]), tf.TensorSpec([5, 7])])
    def product(x, kernel):
        return linear(x, kernel)

    ops = {op.type for op in product.get_concrete_function().graph.get_operations()}
    assert "MatMul" in ops and not ops & {"Einsum", "BatchMatMulV2", "BatchMatMulV3"}
