"""`zoo.layers.linear.linear`: the last-axis product of the models' time loops."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.layers.linear import KernelPair, linear


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


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="a TensorFlow custom gradient")
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 5)])
def test_kernel_pair_is_the_product_and_its_input_gradient_by_plain_products(shape):
    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(size=shape).astype("float32"))
    kernel = tf.constant(rng.normal(size=(5, 7)).astype("float32"))
    upstream = tf.constant(rng.normal(size=(*shape[:-1], 7)).astype("float32"))

    @tf.function
    def product_and_gradient(x, kernel):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = linear(x, KernelPair(kernel, tf.transpose(kernel)))
        return out, tape.gradient(out, x, output_gradients=upstream)

    out, gradient = product_and_gradient(x, kernel)
    np.testing.assert_allclose(out.numpy(), np.tensordot(x, kernel, axes=[[-1], [0]]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gradient.numpy(), np.tensordot(upstream, kernel.numpy().T, axes=[[-1], [0]]),
                               rtol=1e-5, atol=1e-5)
    graph = product_and_gradient.get_concrete_function(x, kernel).graph
    products = [op for op in graph.get_operations() if op.type == "MatMul"]
    assert len(products) == 2 and not any(op.get_attr("transpose_b") or op.get_attr("transpose_a") for op in products)
