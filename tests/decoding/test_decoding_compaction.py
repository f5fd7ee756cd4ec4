"""Batch compaction: finished sentences leave the decoding loop, and no result changes."""

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import StepRecorder, ToyModel
from test_decoding_presets import tiny_model
from test_decoding_shortlist import restricting_table

from zoo.decoding import BeamSearch, Greedy, Sampling, Shortlist, decode
from zoo.decoding.compaction import compacting, gather_rows, scatter_rows, should_compact

# Sources of different lengths (padded with PAD_ID 0), so that the sentences finish at different steps.
SOURCES = np.array(
    [[4, 5, 1, 4, 5, 2, 3], [5, 0, 0, 0, 0, 0, 0], [4, 4, 0, 0, 0, 0, 0], [3, 2, 5, 4, 0, 0, 0],
     [5, 5, 5, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0], [4, 3, 2, 1, 5, 0, 0], [1, 3, 0, 0, 0, 0, 0]],
    np.int32,
)

STRATEGIES = {
    "beam": BeamSearch(3, num_hypotheses=2, length_penalty=0.6),
    "beam_approximate_no_alignments": BeamSearch(2, length_penalty=1.0, stopping="approximate", alignments=False),
    "greedy": Greedy(length_penalty=0.6, coverage_penalty=0.2),
    "greedy_no_alignments": Greedy(alignments=False),
    # Per-sentence temperatures, top-k and seeds: they must follow their sentence when rows leave.
    "sampling": Sampling(temperature=np.linspace(0.0, 1.5, 8).astype(np.float32),
                         top_k=np.array([0, 1, 2, 3, 0, 1, 2, 3], np.int32), seed=np.arange(8, dtype=np.int32)),
}


def assert_same(result, expected):
    for field in result._fields:
        np.testing.assert_allclose(getattr(result, field), getattr(expected, field), rtol=1e-5, atol=1e-6,
                                   err_msg=field)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_dropping_finished_sentences_changes_no_result_and_shrinks_the_steps(name):
    strategy = STRATEGIES[name]
    counter = StepRecorder(ToyModel())
    compacted = decode(counter, SOURCES, strategy)
    whole = StepRecorder(ToyModel())
    expected = decode(whole, SOURCES, strategy, compact=False)
    assert_same(compacted, expected)
    assert set(whole.rows) == {len(SOURCES)}
    assert counter.rows[0] == len(SOURCES) and min(counter.rows) < len(SOURCES), counter.rows
    assert counter.rows == sorted(counter.rows, reverse=True) and len(counter.rows) == len(whole.rows)
    # The same in a graph, where the rows are a run-time dimension.
    graph = tf.function(lambda source: decode(ToyModel(), source, strategy),
                        input_signature=[tf.TensorSpec([None, None], tf.int32)])
    assert_same(graph(SOURCES), expected)
    # And without AutoGraph, as the zoo's own functions trace it (KerasTranslator, the export's signatures).
    plain = tf.function(lambda source: decode(ToyModel(), source, strategy), autograph=False,
                        input_signature=[tf.TensorSpec([None, None], tf.int32)])
    assert_same(plain(SOURCES), expected)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_graph_traced_for_one_batch_shape_gives_the_same_results(name):
    # With a static batch size, Grappler's constant folding takes the loop's outputs to keep their
    # first shape: sizes taken of them after the loop were folded to the whole batch's, and the
    # parking of the last rows failed ("Outer dimensions of indices and update must match").
    strategy = STRATEGIES[name]
    expected = decode(ToyModel(), SOURCES, strategy, compact=False)
    as_argument = tf.function(lambda source: decode(ToyModel(), source, strategy))
    assert_same(as_argument(tf.constant(SOURCES)), expected)
    captured = tf.function(lambda: decode(ToyModel(), tf.constant(SOURCES), strategy))
    assert_same(captured(), expected)


@pytest.mark.parametrize("name", ["beam", "sampling"])
def test_a_zoo_model_with_a_shortlist_gives_the_same_results_compacted(name):
    model = tiny_model("luong_general")
    shortlist = Shortlist(restricting_table(model))
    sources = SOURCES % 14
    compacted = tf.function(lambda s: decode(model, s, STRATEGIES[name], max_length=9, shortlist=shortlist))(sources)
    expected = decode(model, sources, STRATEGIES[name], max_length=9, shortlist=shortlist, compact=False)
    assert_same(compacted, expected)


def test_under_xla_the_loop_keeps_every_row():
    strategy = STRATEGIES["beam"]
    expected = decode(ToyModel(), SOURCES, strategy, compact=False)
    compiled = tf.function(lambda source: decode(ToyModel(), source, strategy), jit_compile=True)
    result = compiled(tf.constant(SOURCES))
    np.testing.assert_array_equal(result.ids, expected.ids)
    np.testing.assert_allclose(result.scores, expected.scores, rtol=1e-4, atol=1e-5)


def test_the_loop_compacts_in_a_graph_and_eagerly_but_not_under_xla():
    # compaction.py asks TensorFlow's internal control_flow_util whether XLA compiles the graph; if
    # that import ever failed, its fallback would never compact (correct, slower): this says so.
    assert compacting(True) and not compacting(False)
    in_graph = tf.function(lambda: tf.constant(compacting(True)))
    in_xla = tf.function(lambda: tf.constant(compacting(True)), jit_compile=True)
    assert bool(in_graph()) and not bool(in_xla())


def test_rows_leave_once_a_quarter_of_them_are_done():
    assert not should_compact(tf.constant([True, False, False, False, False]))
    assert should_compact(tf.constant([True, False, False, False]))
    assert not should_compact(tf.constant([True, True]))  # all done: the loop stops anyway
    assert not should_compact(tf.constant([False, False]))


def test_rows_are_gathered_and_scattered_back_along_each_tensors_batch_axis():
    batch_major = tf.reshape(tf.range(12), [4, 3])  # (B, 3)
    time_major = tf.reshape(tf.range(8), [2, 4])  # (T, B)
    tree, axes = (batch_major, time_major, tf.constant([7, 8])), (0, 1, None)
    index = tf.constant([3, 1])
    rows = gather_rows(tree, axes, index)
    np.testing.assert_array_equal(rows[0], [[9, 10, 11], [3, 4, 5]])
    np.testing.assert_array_equal(rows[1], [[3, 1], [7, 5]])
    np.testing.assert_array_equal(rows[2], [7, 8])
    zeros = tf.nest.map_structure(tf.zeros_like, tree)
    back = scatter_rows(zeros, axes, index, rows)
    np.testing.assert_array_equal(back[0], [[0, 0, 0], [3, 4, 5], [0, 0, 0], [9, 10, 11]])
    np.testing.assert_array_equal(back[1], [[0, 1, 0, 3], [0, 5, 0, 7]])
    np.testing.assert_array_equal(back[2], [0, 0])  # not per sentence: left alone


def test_rejects_a_compact_flag_that_is_not_a_bool():
    with pytest.raises(ValueError, match="compact must be True or False, received 'yes'"):
        decode(ToyModel(), SOURCES, Greedy(), compact="yes")
