"""Every test starts from Keras' defaults, whatever the previous test set globally."""

import keras
import pytest


@pytest.fixture(autouse=True)
def _restore_keras_globals():
    policy, floatx = keras.config.dtype_policy(), keras.config.floatx()
    yield
    keras.config.set_dtype_policy(policy)
    keras.config.set_floatx(floatx)
