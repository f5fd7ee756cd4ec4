"""The time loop: `scan` carries any structure and stacks any structure of per-step outputs."""

import numpy as np
from keras import ops

from zoo.models.time_loop import scan


def test_scan_stacks_nested_outputs_of_their_own_shapes_and_dtypes():
    xs = np.arange(12, dtype="float32").reshape(4, 3)  # (T, 3)
    init = (np.zeros((3,), "float32"), {"count": np.zeros((), "int32")})

    def step(carry, x):
        total, counter = carry
        total = total + x
        outputs = {"total": total, "pair": (ops.sum(x), ops.cast(counter["count"], "int32") * 2)}
        return (total, {"count": counter["count"] + 1}), outputs

    (total, counter), ys = scan(step, init, xs)
    np.testing.assert_array_equal(ops.convert_to_numpy(total), xs.sum(0))
    assert int(ops.convert_to_numpy(counter["count"])) == 4
    np.testing.assert_array_equal(ops.convert_to_numpy(ys["total"]), np.cumsum(xs, 0))
    np.testing.assert_array_equal(ops.convert_to_numpy(ys["pair"][0]), xs.sum(1))
    np.testing.assert_array_equal(ops.convert_to_numpy(ys["pair"][1]), [0, 2, 4, 6])
    assert ops.convert_to_numpy(ys["pair"][1]).dtype == np.int32


def test_scan_of_one_step_and_a_single_output():
    carry, ys = scan(lambda c, x: (c + x, x * 2), np.zeros((2,), "float32"), np.ones((1, 2), "float32"))
    np.testing.assert_array_equal(ops.convert_to_numpy(carry), [1, 1])
    np.testing.assert_array_equal(ops.convert_to_numpy(ys), [[2, 2]])
