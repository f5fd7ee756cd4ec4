"""`layer.precompute(value)` names a value of the wrong shape, as a call does."""

import numpy as np
import pytest

from zoo.layers import AdditiveAttention, ConcatAttention, GeneralAttention, ReducedRankAttention


@pytest.mark.parametrize("make", [GeneralAttention, lambda: ReducedRankAttention(2), lambda: ConcatAttention(3),
                                  lambda: AdditiveAttention(3)], ids=["general", "reduced_rank", "concat", "additive"])
def test_precompute_checks_the_value_it_is_given(make):
    # It failed inside the backend's matmul ("Matrix size-incompatible: In[0]: [10,7], In[1]: [8,3]"), or for a
    # value (B, Dv) returned keys (B, Dk) that only a later call refused.
    layer = make()
    layer(np.ones((2, 6), "float32"), np.ones((2, 5, 8), "float32"))
    built = r"\(the layer was built for value \(\.\.\., 8\)\)"
    for shape in [(2, 5, 7), (2, 8), (2, 1, 5, 8)]:
        with pytest.raises(ValueError, match=rf"value must have shape \(B, Tv, 8\) {built}, received shape "
                                             rf"\({', '.join(map(str, shape))},?\)"):
            layer.precompute(np.ones(shape, "float32"))
    assert tuple(layer.precompute(np.ones((2, 5, 8), "float32")).shape)[:2] == (2, 5)
