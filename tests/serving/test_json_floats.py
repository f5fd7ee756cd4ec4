"""Floats in zoo-serve's answers are written as TF Serving writes them (tensorflow_serving/util/json_tensor.cc,
`WriteDecimal`): six significant digits when they read back as the same float32, else nine."""

import json

import numpy as np

from serving.json_tensor import COLUMNAR, arrays_to_response


def test_floats_take_six_digits_when_those_read_back():
    # Nine digits always: 0.1 came out as 0.100000001, which a client reads as another float64 than TF Serving's 0.1.
    values = np.array([0.1, 3e-5, 0.2, -0.31, -0.595732152, 1 / 3, np.nan, np.inf, -np.inf], np.float32)
    answer = arrays_to_response({"scores": values}, COLUMNAR)
    text = json.dumps(answer)
    assert text == ('{"outputs": [0.1, 3e-05, 0.2, -0.31, -0.595732152, 0.333333343, NaN, Infinity, -Infinity]}')
    assert np.array_equal(np.array(answer["outputs"], np.float32), values, equal_nan=True)  # the same float32s
