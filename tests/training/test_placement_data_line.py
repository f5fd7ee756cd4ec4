"""The `data:` line of a run says how many training pairs its batches leave out."""

import ml_collections

from zoo.training import placement


def _config(**fields):
    return ml_collections.ConfigDict(dict(dict(batch_size=4, batch_tokens=0, drop_long=False, max_source_length=3,
                                               max_target_length=5), **fields))


def test_pairs_left_out_of_the_batches_are_said_with_why():
    line = placement._data(_config(drop_long=True), [("a", "b")] * 200, 4, False, 15)
    assert line == ("200 training pairs, 185 of them left out of the batches (longer than max_source_length=3 or "
                    "max_target_length=5 tokens (drop_long), or a side with no token) (4 batches of <= 4)")
    assert placement._data(_config(), [("a", "b")] * 200, 50, False, 200) == "200 training pairs (50 batches of <= 4)"
    assert "a bucket's partial batch (static shapes)" in placement._data(_config(), [("a", "b")] * 9, 2, True, 8)
