"""`split_pairs`: one corpus into train/dev/test (colab/04_your_data.ipynb's upload path)."""

import pytest

from zoo.data import DataError, split_pairs


def pairs(n):
    return [(f"source {i}", f"target {i}") for i in range(n)]


@pytest.mark.parametrize("n, held", [(1500, 30), (2500, 50), (120_000, 1000), (12, 1)])
def test_two_percent_each_for_dev_and_test_at_most_1000(n, held):
    # The notebook held out 1000 + 1000 whatever the size: an upload of 1500 pairs left none to train on.
    split = split_pairs(pairs(n), seed=3)
    assert (len(split["dev"]), len(split["test"]), len(split["train"])) == (held, held, n - 2 * held)
    together = split["dev"] + split["test"] + split["train"]
    assert sorted(together) == sorted(pairs(n))  # each pair once
    assert split == split_pairs(pairs(n), seed=3) != split_pairs(pairs(n), seed=4)


def test_too_few_pairs_are_named():
    with pytest.raises(DataError, match=r"upload.tsv: 11 pair\(s\) are too few to split into train, dev and test; "
                                        r"expected at least 12"):
        split_pairs(pairs(11), name="upload.tsv")
