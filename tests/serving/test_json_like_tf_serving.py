"""zoo-serve's JSON tensors as TF Serving's (tensorflow_serving/util/json_tensor.cc): floats written with six
significant digits when they read back as the same float32, else nine (`WriteDecimal`); base64 read as abseil's
`Base64Unescape` reads it."""

import json

import numpy as np
import pytest

from serving.errors import BadRequestError
from serving.json_tensor import COLUMNAR, arrays_to_response


def test_floats_take_six_digits_when_those_read_back():
    # Nine digits always: 0.1 came out as 0.100000001, which a client reads as another float64 than TF Serving's 0.1.
    values = np.array([0.1, 3e-5, 0.2, -0.31, -0.595732152, 1 / 3, np.nan, np.inf, -np.inf], np.float32)
    answer = arrays_to_response({"scores": values}, COLUMNAR)
    text = json.dumps(answer)
    assert text == ('{"outputs": [0.1, 3e-05, 0.2, -0.31, -0.595732152, 0.333333343, NaN, Infinity, -Infinity]}')
    assert np.array_equal(np.array(answer["outputs"], np.float32), values, equal_nan=True)  # the same float32s


def test_base64_inputs_read_as_tf_serving_reads_them():
    # abseil's Base64Unescape, which TF Serving uses, skips whitespace and takes the closing "=" as optional;
    # zoo-serve refused both ("Incorrect padding", "Only base64 data is allowed").
    from serving.json_tensor import _to_bytes

    for text in ("MjAyMC0wMS0wNQ==", "MjAyMC0wMS0wNQ", "MjAyMC0w\nMS0wNQ==", " MjAyMC0wMS0wNQ "):
        assert _to_bytes({"b64": text}, "source") == b"2020-01-05"
    for bad in ("***", "MjAyM"):  # not base64; a length no padding completes
        with pytest.raises(BadRequestError, match="invalid base64"):
            _to_bytes({"b64": bad}, "source")


def test_numbers_past_float32_become_infinities_as_in_tf_serving():
    # TF Serving's own test FloatTensorThatExceedsMaxReturnsInf (tensorflow_serving/util/json_tensor_test.cc);
    # zoo-serve refused them, saying TF Serving did. An integer no double holds is refused by both.
    import tensorflow as tf

    from serving.json_tensor import _to_array

    converted = _to_array([1e39, -1e39, 10**39, 0.5], tf.float32, "length_penalty", None)
    assert converted.dtype == np.float32 and list(converted) == [np.inf, -np.inf, np.inf, 0.5]
    with pytest.raises(BadRequestError, match="an integer of 400 digits is out of range for float32"):
        _to_array([int("9" * 400)], tf.float32, "length_penalty", None)
