"""Sizes given as numpy integers are integers: the layers take them (and keep Python ints in their config)."""

import numpy as np
import pytest

from zoo.layers import AdditiveAttention, ConcatAttention, ReducedRankAttention


@pytest.mark.parametrize("make, field", [
    (lambda n: ConcatAttention(units=n), "units"),
    (lambda n: AdditiveAttention(units=n), "units"),
    (lambda n: ReducedRankAttention(rank=n), "rank"),
])
def test_numpy_integer_sizes(make, field):
    layer = make(np.int64(4))
    assert getattr(layer, field) == 4 and type(layer.get_config()[field]) is int
    with pytest.raises(ValueError, match=f"`{field}` must be a positive integer"):
        make(np.float32(4.0))
    with pytest.raises(ValueError, match=f"`{field}` must be a positive integer"):
        make(np.int32(0))
