"""Every test starts from Keras' defaults, whatever the previous test set globally.

Float32 matrix products run in full float32: on a GPU both backends would otherwise use
TensorFloat-32 (10-bit mantissas), and the tests compare the layers with their equations
at float32 tolerances.
"""

import keras
import pytest

if keras.backend.backend() == "jax":
    import jax

    jax.config.update("jax_default_matmul_precision", "highest")
elif keras.backend.backend() == "tensorflow":
    import tensorflow as tf

    tf.config.experimental.enable_tensor_float_32_execution(False)


@pytest.fixture(autouse=True)
def _restore_keras_globals():
    policy, floatx = keras.config.dtype_policy(), keras.config.floatx()
    yield
    keras.config.set_dtype_policy(policy)
    keras.config.set_floatx(floatx)
