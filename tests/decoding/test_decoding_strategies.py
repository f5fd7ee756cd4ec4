"""The decoding seam: `decode` with every strategy, run-time parameters, the registry, `strategy_for`."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import ToyModel, hypotheses

import zoo.decoding
from zoo.constants import DEFAULT_LENGTH_PENALTY
from zoo.data.vocabulary import UNK_ID
from zoo.decoding import BeamSearch, DecodingResult, Greedy, Sampling, beam_search, decode, greedy_search
from zoo.decoding.single_hypothesis import SingleHypothesisSearch


def padded(sentences):
    width = max(len(s) for s in sentences)
    return np.array([s + [0] * (width - len(s)) for s in sentences], np.int32)


SOURCE = padded([[4, 5, 1, 4], [5], [1, 1, 5, 4, 4, 5, 4]])
STRATEGIES = {
    "greedy": Greedy(length_penalty=0.6),
    "beam": BeamSearch(3, num_hypotheses=2, length_penalty=0.6, coverage_penalty=0.2),
    "sampling": Sampling(temperature=0.8, top_k=3, seed=7),
}


def assert_same_result(result, expected):
    assert isinstance(result, DecodingResult)
    np.testing.assert_array_equal(result.ids.numpy(), expected.ids.numpy())
    np.testing.assert_array_equal(result.lengths.numpy(), expected.lengths.numpy())
    np.testing.assert_allclose(result.scores.numpy(), expected.scores.numpy(), rtol=1e-5)
    np.testing.assert_allclose(result.log_probs.numpy(), expected.log_probs.numpy(), rtol=1e-5)
    np.testing.assert_allclose(result.attention.numpy(), expected.attention.numpy(), atol=1e-6)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_decode_is_the_same_eager_in_a_function_and_under_xla(name):
    model, strategy = ToyModel(seed=2, sharpness=0.8, end_bias=-1.0), STRATEGIES[name]
    eager = decode(model, SOURCE, strategy)
    graph = tf.function(
        lambda source: decode(model, source, strategy), input_signature=[tf.TensorSpec([None, None], tf.int32)]
    )
    compiled = tf.function(lambda source: decode(model, source, strategy, max_length=12), jit_compile=True)
    assert_same_result(graph(SOURCE), eager)
    assert_same_result(compiled(SOURCE), decode(model, SOURCE, strategy, max_length=12))


def test_the_wrappers_are_decode_with_their_strategy():
    model = ToyModel(seed=3, end_bias=-1.0)
    assert_same_result(greedy_search(model, SOURCE, length_penalty=0.6), decode(model, SOURCE, STRATEGIES["greedy"]))
    assert_same_result(
        beam_search(model, SOURCE, beam_width=3, num_hypotheses=2, length_penalty=0.6, coverage_penalty=0.2),
        decode(model, SOURCE, STRATEGIES["beam"]),
    )


def test_sampling_takes_run_time_parameters_scalar_or_per_sentence():
    model = ToyModel(seed=0, sharpness=0.7, end_bias=-1.0)
    scalars = [tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.float32),
               tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.int32)]

    def sample(source, temperature, top_k, seed):
        return decode(model, source, Sampling(temperature, top_k, seed))

    graph = tf.function(sample, input_signature=scalars)
    per_sentence = tf.function(sample, input_signature=scalars[:1] + [tf.TensorSpec([None], s.dtype) for s in scalars[1:]])
    compiled = tf.function(sample, jit_compile=True)
    for temperature, top_k, seed in [(0.8, 3, 7), (1.5, 0, 2), (0.0, 0, 5)]:
        eager = decode(model, SOURCE, Sampling(temperature, top_k, seed))
        assert_same_result(graph(SOURCE, temperature, top_k, seed), eager)
        assert_same_result(compiled(SOURCE, tf.constant(temperature), tf.constant(top_k), tf.constant(seed)), eager)
        rows = [tf.fill([3], tf.constant(value)) for value in (temperature, top_k, seed)]
        assert_same_result(per_sentence(SOURCE, *rows), eager)
    assert len(graph._list_all_concrete_functions()) == 1
    # Per-sentence parameters apply to their own sentence: row 1 greedy, the others drawn.
    mixed = per_sentence(SOURCE, tf.constant([0.8, 0.0, 1.5]), tf.constant([3, 0, 0]), tf.constant([7, 1, 2]))
    assert hypotheses(mixed, 0) == hypotheses(decode(model, SOURCE, Sampling(0.8, 3, 7)), 0)
    assert hypotheses(mixed, 1) == hypotheses(decode(model, SOURCE, Greedy()), 1)
    assert hypotheses(mixed, 2) == hypotheses(decode(model, SOURCE, Sampling(1.5, 0, 2)), 2)


def test_registry_lists_and_builds_strategies_by_name():
    assert zoo.decoding.names() == ["beam_search", "greedy", "sampling"]
    built = zoo.decoding.get("beam_search", beam_width=4, length_penalty=0.2)
    assert isinstance(built, BeamSearch) and (built.beam_width, built.length_penalty) == (4, 0.2)
    assert isinstance(zoo.decoding.get("greedy"), Greedy)
    assert zoo.decoding.get("sampling", top_k=5).top_k == 5
    with pytest.raises(ValueError, match=r"Unknown decoding strategy 'nucleus'; expected one of \['beam_search'"):
        zoo.decoding.get("nucleus")
    with pytest.raises(ValueError, match="'greedy' is already registered"):
        type("AnotherGreedy", (SingleHypothesisSearch,), {}, name="greedy")


def test_strategy_for_picks_greedy_only_for_the_python_int_one():
    greedy = zoo.decoding.strategy_for(1, length_penalty=0.3, coverage_penalty=0.1)
    assert isinstance(greedy, Greedy) and (greedy.length_penalty, greedy.coverage_penalty) == (0.3, 0.1)
    assert isinstance(zoo.decoding.strategy_for(np.int64(1)), Greedy)
    beam = zoo.decoding.strategy_for(4, num_hypotheses=2)
    assert isinstance(beam, BeamSearch)
    assert (beam.beam_width, beam.num_hypotheses, beam.length_penalty, beam.coverage_penalty) == (
        4, 2, DEFAULT_LENGTH_PENALTY, 0.0)
    # A tensor width is only known at run time: beam search, which is greedy at width 1.
    assert isinstance(zoo.decoding.strategy_for(tf.constant(1)), BeamSearch)
    with pytest.raises(ValueError, match="beam_width must be >= 1, received 0"):
        zoo.decoding.strategy_for(0)
    with pytest.raises(ValueError, match="num_hypotheses must be >= 1, received 0"):
        zoo.decoding.strategy_for(1, num_hypotheses=0)


@dataclasses.dataclass(frozen=True, eq=False)
class LowestAllowedToken(SingleHypothesisSearch):
    """A strategy written outside zoo.decoding: always the lowest allowed token id (UNK)."""

    def choose(self, log_probs, step, choice):
        return tf.argmax(tf.cast(tf.math.is_finite(log_probs), tf.int32), axis=1, output_type=tf.int32)


def test_a_new_strategy_is_one_class():
    model = ToyModel(seed=1)
    result = decode(model, SOURCE, LowestAllowedToken(), max_length=5)
    np.testing.assert_array_equal(result.ids.numpy(), np.full([3, 1, 5], UNK_ID))
    np.testing.assert_array_equal(result.lengths.numpy(), [[5]] * 3)
    expected = zoo.decoding.sequence_log_prob(model, SOURCE, result.ids[:, 0], append_end=False)
    np.testing.assert_allclose(result.log_probs[:, 0], expected, rtol=1e-5)
    assert LowestAllowedToken.name is None and "LowestAllowedToken" not in str(zoo.decoding.names())


def test_decode_rejects_what_is_not_a_strategy():
    with pytest.raises(TypeError, match="strategy must be a zoo.decoding strategy .* received 'greedy'"):
        decode(ToyModel(), SOURCE, "greedy")


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_search_without_alignments_finds_the_same_hypotheses_and_zero_attention(name):
    model, strategy = ToyModel(seed=4, sharpness=0.8, end_bias=-1.0), STRATEGIES[name]
    lean = dataclasses.replace(strategy, alignments=False)
    full = decode(model, SOURCE, strategy)
    assert float(tf.reduce_sum(tf.abs(full.attention))) > 0  # the full search does record attention
    expected = full._replace(attention=tf.zeros_like(full.attention))
    assert_same_result(decode(model, SOURCE, lean), expected)
    compiled = tf.function(lambda source: decode(model, source, lean, max_length=12), jit_compile=True)
    reference = decode(model, SOURCE, strategy, max_length=12)
    assert_same_result(compiled(SOURCE), reference._replace(attention=tf.zeros_like(reference.attention)))
    with pytest.raises(ValueError, match="alignments must be True or False"):
        dataclasses.replace(strategy, alignments="no")
