"""Beam search: exactness against exhaustive search, invariance, XLA, stopping, layout."""

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import (
    ALLOWED_TOKENS,
    MarkovModel,
    ToyModel,
    exhaustive_search,
    hypotheses,
    reference_beam_search,
)

from zoo.data.vocabulary import EOS_ID
from zoo.decoding import DecodingResult, beam_search, greedy_search

MAX_LENGTH = 5
# Every live prefix and every one of its extensions fits: (V - 2) * (V - 3) ** (T - 1).
FULL_WIDTH = len(ALLOWED_TOKENS) * (len(ALLOWED_TOKENS) - 1) ** (MAX_LENGTH - 1)

SOURCES = [[4, 5, 1, 4], [5, 4], [1, 1, 5, 4, 4, 5]]


def padded(sentences):
    width = max(len(s) for s in sentences)
    return np.array([s + [0] * (width - len(s)) for s in sentences], np.int32)


@pytest.mark.parametrize(
    "alpha, normalization, beta",
    [(0.0, "gnmt", 0.0), (0.6, "gnmt", 0.0), (1.0, "average", 0.0), (0.6, "gnmt", 0.3)],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_full_width_beam_equals_exhaustive_search(alpha, normalization, beta, seed):
    model = ToyModel(seed=seed, end_bias=-1.0)
    source = np.array([SOURCES[seed]], np.int32)
    expected = exhaustive_search(model, source, MAX_LENGTH, alpha, normalization, beta)[:8]
    result = beam_search(
        model,
        source,
        beam_width=FULL_WIDTH,
        num_hypotheses=8,
        length_penalty=alpha,
        coverage_penalty=beta,
        max_length=MAX_LENGTH,
        length_normalization=normalization,
    )
    assert hypotheses(result) == [tokens for _, _, tokens in expected]
    np.testing.assert_allclose(result.scores.numpy()[0], [s for s, _, _ in expected], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(result.log_probs.numpy()[0], [lp for _, lp, _ in expected], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("beam_width", [2, FULL_WIDTH])
def test_search_runs_until_no_longer_hypothesis_can_win(beam_width):
    # [EOS] has probability 0.6, yet with alpha = 2 the cut [4, 4, 4, 4, 4]
    # (log 0.4 + 4 log 0.99) / ((5 + 5) / 6) ** 2 = -0.34 beats its -0.51: a search
    # that bounds live hypotheses by the next length instead of the longest stops too early.
    model = MarkovModel({2: {EOS_ID: 0.6, 4: 0.4 - 1e-6}, 4: {4: 0.99, EOS_ID: 0.005}})
    source = np.array([[4, 5]], np.int32)
    expected = exhaustive_search(model, source, MAX_LENGTH, alpha=2.0)
    assert expected[0][2] == (4, 4, 4, 4, 4)
    result = beam_search(model, source, beam_width=beam_width, length_penalty=2.0, max_length=MAX_LENGTH)
    assert hypotheses(result) == [(4, 4, 4, 4, 4)]
    np.testing.assert_allclose(result.scores[0, 0], expected[0][0], rtol=1e-5)


def test_narrow_beam_never_beats_exhaustive_and_can_miss_it():
    gaps = []
    for seed in range(6):
        model = ToyModel(seed=seed, end_bias=-1.0)
        source = np.array([SOURCES[seed % 3]], np.int32)
        best = exhaustive_search(model, source, MAX_LENGTH, 0.6)[0][0]
        found = beam_search(model, source, beam_width=2, length_penalty=0.6, max_length=MAX_LENGTH).scores[0, 0]
        assert float(found) <= best + 1e-5
        gaps.append(best - float(found))
    # The test is only meaningful if the toy's search problem is not trivially greedy.
    assert max(gaps) > 1e-3


@pytest.mark.parametrize("beam_width, num_hypotheses", [(2, 1), (3, 3), (5, 2)])
def test_narrow_beam_equals_a_plain_reference_beam_search_on_a_larger_vocabulary(beam_width, num_hypotheses):
    # V = 40: each beam's top-(K + 3) pruning, the batching and the freezing must all be exact.
    sentences = [[4, 5, 1, 4], [5], [1, 1, 5, 4, 4, 5, 4]]
    last_tokens = set()
    for seed in range(3):
        model = ToyModel(vocab_size=40, seed=seed, sharpness=1.5, end_bias=3.0)
        result = beam_search(
            model, padded(sentences), beam_width=beam_width, num_hypotheses=num_hypotheses,
            length_penalty=0.6, max_length=8,
        )
        for b, sentence in enumerate(sentences):
            expected = reference_beam_search(model, padded([sentence]), beam_width, num_hypotheses, 8, 0.6)
            assert hypotheses(result, b) == [tokens for _, _, tokens in expected]
            np.testing.assert_allclose(result.scores[b], [s for s, _, _ in expected], rtol=1e-5)
            last_tokens.update(tokens[-1] == EOS_ID for _, _, tokens in expected)
    assert last_tokens == {True, False}, "cover hypotheses that end and hypotheses cut at max_length"


def test_never_produced_and_end_tokens_at_the_top_do_not_crowd_out_live_extensions():
    # PAD, BOS and the end token are the three most probable tokens: a beam must still find
    # its K best other extensions below them.
    model = MarkovModel({2: {0: 0.3, 2: 0.25, EOS_ID: 0.2, 4: 0.1, 5: 0.08}, 4: {EOS_ID: 0.9}, 5: {EOS_ID: 0.9}})
    source = np.array([[4, 5]], np.int32)
    result = beam_search(model, source, beam_width=2, num_hypotheses=2, length_penalty=0.0, max_length=4)
    assert hypotheses(result) == [(EOS_ID,), (4, EOS_ID)]
    expected = reference_beam_search(model, source, 2, 2, 4)
    np.testing.assert_allclose(result.log_probs[0], [lp for _, lp, _ in expected], rtol=1e-5)
    np.testing.assert_allclose(result.log_probs[0], np.log([0.2, 0.1 * 0.9]), rtol=1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_beam_width_one_is_greedy_token_for_token(seed):
    model = ToyModel(seed=seed, end_bias=-1.5)
    source = padded(SOURCES + [[4], [5, 5, 5, 5, 5, 5, 5, 5]])
    greedy = greedy_search(model, source)
    beam = beam_search(model, source, beam_width=1, length_penalty=0.0)
    for b in range(len(source)):
        assert hypotheses(beam, b) == hypotheses(greedy, b)
    np.testing.assert_array_equal(beam.ids.numpy(), greedy.ids.numpy())
    np.testing.assert_array_equal(beam.lengths.numpy(), greedy.lengths.numpy())
    np.testing.assert_allclose(beam.log_probs.numpy(), greedy.log_probs.numpy(), rtol=1e-6)
    np.testing.assert_allclose(beam.attention.numpy(), greedy.attention.numpy(), atol=1e-7)


def test_sentence_decodes_the_same_alone_and_in_a_batch():
    model = ToyModel(seed=3, end_bias=-1.5)
    sentences = [[4, 5, 1, 4], [5], [1, 1, 5, 4, 4, 5, 4], [4, 4]]
    options = dict(beam_width=3, num_hypotheses=3, length_penalty=0.6, coverage_penalty=0.2)
    together = beam_search(model, padded(sentences), **options)
    for b, sentence in enumerate(sentences):
        alone = beam_search(model, padded([sentence]), **options)
        assert hypotheses(together, b) == hypotheses(alone, 0)
        np.testing.assert_allclose(together.scores[b], alone.scores[0], rtol=1e-5)
        np.testing.assert_allclose(together.log_probs[b], alone.log_probs[0], rtol=1e-5)
        length = len(sentence)
        T = alone.ids.shape[2]
        np.testing.assert_allclose(
            together.attention.numpy()[b, :, :T, :length], alone.attention.numpy()[0], atol=1e-6
        )
        # Attention never reaches the padding.
        assert np.all(together.attention.numpy()[b, :, :, length:] == 0.0)


def test_eager_function_and_xla_agree_with_a_runtime_beam_width():
    # A run-time coverage penalty keeps the coverage; a known 0 skips it: the same results.
    model = ToyModel(seed=4, end_bias=-1.0)
    source = tf.constant(padded([[4, 5, 1, 4], [5, 4], [1]]))

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([], tf.int32),
            tf.TensorSpec([], tf.float32),
            tf.TensorSpec([], tf.float32),
        ]
    )
    def graph(source, beam_width, alpha, beta):
        return beam_search(model, source, beam_width=beam_width, num_hypotheses=2, length_penalty=alpha,
                           coverage_penalty=beta)

    @tf.function(jit_compile=True)
    def compiled(source, beam_width, alpha, beta):
        return beam_search(model, source, beam_width=beam_width, num_hypotheses=2, length_penalty=alpha,
                           coverage_penalty=beta)

    for width, beta in ((2, 0.0), (4, 0.0), (4, 0.2)):
        eager = beam_search(model, source, beam_width=width, num_hypotheses=2, length_penalty=0.6,
                            coverage_penalty=beta)
        for result in (graph(source, width, 0.6, beta),
                       compiled(source, tf.constant(width), tf.constant(0.6), tf.constant(beta))):
            assert isinstance(result, DecodingResult)
            np.testing.assert_array_equal(result.ids.numpy(), eager.ids.numpy())
            np.testing.assert_array_equal(result.lengths.numpy(), eager.lengths.numpy())
            np.testing.assert_allclose(result.scores.numpy(), eager.scores.numpy(), rtol=1e-5)
            np.testing.assert_allclose(result.log_probs.numpy(), eager.log_probs.numpy(), rtol=1e-5)
            np.testing.assert_allclose(result.attention.numpy(), eager.attention.numpy(), atol=1e-5)
    # One graph serves every beam width.
    assert len(graph._list_all_concrete_functions()) == 1


def test_result_layout():
    model = ToyModel(seed=0, end_bias=-1.0)
    source = padded([[4, 5, 1, 4], [5, 4]])
    result = beam_search(model, source, beam_width=4, num_hypotheses=3, length_penalty=0.6)
    T = 2 * source.shape[1] + 10
    assert result.ids.shape == (2, 3, T) and result.ids.dtype == tf.int32
    assert result.lengths.shape == (2, 3) and result.lengths.dtype == tf.int32
    assert result.scores.shape == (2, 3) and result.log_probs.shape == (2, 3)
    assert result.attention.shape == (2, 3, T, source.shape[1])
    ids, lengths, attention = result.ids.numpy(), result.lengths.numpy(), result.attention.numpy()
    limits = 2 * np.sum(source != 0, axis=1) + 10
    for b in range(2):
        assert np.all(np.diff(result.scores.numpy()[b]) <= 0), "scores must be sorted best first"
        for n in range(3):
            length = lengths[b, n]
            real = ids[b, n, :length]
            assert np.all(ids[b, n, length:] == 0) and np.all(attention[b, n, length:] == 0)
            assert np.all(np.isin(real, ALLOWED_TOKENS))
            assert np.all(real[:-1] != EOS_ID)
            assert real[-1] == EOS_ID or length == limits[b]
            np.testing.assert_allclose(attention[b, n, :length].sum(-1), 1.0, rtol=1e-5)
            # A finished hypothesis' ranking score is its length-normalized log-probability.
            lp = ((5.0 + length) / 6.0) ** 0.6
            np.testing.assert_allclose(result.scores[b, n], result.log_probs[b, n] / lp, rtol=1e-5)
    assert result.trim().ids.shape[2] == lengths.max()


def test_slots_no_hypothesis_reached_are_empty():
    # Four tokens may be produced, so a width-6 beam over one step has four hypotheses: the other two
    # slots had length 1 and a PAD id, which a reader of ids[:length] took for a token.
    result = beam_search(ToyModel(seed=1), padded([[4, 5]]), beam_width=6, num_hypotheses=6, max_length=1)
    lengths, scores = result.lengths.numpy()[0], result.scores.numpy()[0]
    np.testing.assert_array_equal(lengths, [1, 1, 1, 1, 0, 0])
    assert np.all(np.isfinite(scores[:4])) and np.all(scores[4:] == -np.inf)
    assert np.all(result.log_probs.numpy()[0, 4:] == -np.inf) and np.all(result.ids.numpy()[0, 4:] == 0)


def test_default_max_length_is_twice_the_source_plus_ten_per_sentence():
    model = ToyModel(seed=1, end_bias=-1e4)  # never ends
    source = padded([[4, 5, 1], [5]])
    result = beam_search(model, source, beam_width=2, num_hypotheses=2)
    np.testing.assert_array_equal(result.lengths.numpy(), [[16, 16], [12, 12]])
    assert not np.any(result.ids.numpy() == EOS_ID)
    fixed = beam_search(model, source, beam_width=2, max_length=tf.constant(7))
    np.testing.assert_array_equal(fixed.lengths.numpy(), [[7], [7]])
    assert fixed.ids.shape[2] == 7


class CountingModel:
    """Counts `step` calls and checks that the memory reaches `step` untiled (one row per sentence
    still searching, not one per hypothesis)."""

    def __init__(self, model):
        self.model, self.steps, self.memory = model, 0, None

    def encode(self, source_ids):
        self.memory, state = self.model.encode(source_ids)
        return self.memory, state

    def step(self, token_ids, state, memory):
        assert memory["keys"].shape[0] == token_ids.shape[0] <= self.memory["keys"].shape[0]
        self.steps += 1
        return self.model.step(token_ids, state, memory)


def test_stops_as_soon_as_no_live_hypothesis_can_win():
    eager_to_end = CountingModel(ToyModel(seed=1, end_bias=4.0))
    result = beam_search(eager_to_end, padded([[4, 5, 1, 4]]), beam_width=4, length_penalty=0.0)
    assert hypotheses(result) == [(EOS_ID,)]
    # After step 1 the best live hypothesis (log p <= log p(first token)) has lost for sure.
    assert eager_to_end.steps == 1
    with_penalty = CountingModel(ToyModel(seed=1, end_bias=4.0))
    beam_search(with_penalty, padded([[4, 5, 1, 4]]), beam_width=4, length_penalty=1.0)
    # A length penalty lets longer hypotheses catch up, but the bound still ends the search early.
    assert 1 <= with_penalty.steps < 18


def test_rejects_bad_arguments():
    model = ToyModel()
    source = padded([[4, 5]])
    with pytest.raises(ValueError, match="beam_width must be >= 1, received 0"):
        beam_search(model, source, beam_width=0)
    with pytest.raises(ValueError, match="num_hypotheses must be >= 1"):
        beam_search(model, source, num_hypotheses=0)
    with pytest.raises(ValueError, match="length_normalization must be one of"):
        beam_search(model, source, length_normalization="mean")
    with pytest.raises(ValueError, match="coverage_penalty must be >= 0"):
        beam_search(model, source, coverage_penalty=-0.1)
    with pytest.raises(ValueError, match="max_length must be >= 1, received 0"):
        beam_search(model, source, max_length=0)
    # num_hypotheses larger than the beam is clipped to it.
    assert beam_search(model, source, beam_width=2, num_hypotheses=5).ids.shape[1] == 2


def test_max_length_caps_each_sentences_own_limit():
    model = ToyModel(seed=1, end_bias=-1e4)  # never ends: every hypothesis runs to its limit
    source = padded([[4, 5, 1], [5]])  # own limits 2 * 3 + 10 = 16 and 2 * 1 + 10 = 12
    capped = beam_search(model, source, beam_width=2, max_length=14)
    np.testing.assert_array_equal(capped.lengths.numpy(), [[14], [12]])
    assert capped.ids.shape[2] == 14  # the buffer too: min(2 * S + 10, max_length)
    # A sentence decodes the same alone as in the batch, under the cap too.
    alone = beam_search(model, padded([[5]]), beam_width=2, max_length=14)
    np.testing.assert_array_equal(alone.ids.numpy()[0, :, :12], capped.ids.numpy()[1, :, :12])
