"""Sampling: the limits that are greedy search, reproducibility, batch invariance, the drawn distribution."""

import statistics

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import ToyModel, hypotheses, sampling_distribution

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding import Greedy, Sampling, decode, sequence_log_prob
from zoo.decoding.sampling import keep_top_k, noise_from_bits


def padded(sentences):
    width = max(len(s) for s in sentences)
    return np.array([s + [0] * (width - len(s)) for s in sentences], np.int32)


SENTENCES = [[4, 5, 1, 4], [5], [1, 1, 5, 4, 4, 5, 4], [4, 4], [5, 1, 1]]
# A flat toy model: samples differ from greedy and from each other.
FLAT = dict(seed=0, sharpness=0.7, end_bias=-1.0)


def assert_same_result(result, expected):
    np.testing.assert_array_equal(result.ids.numpy(), expected.ids.numpy())
    np.testing.assert_array_equal(result.lengths.numpy(), expected.lengths.numpy())
    np.testing.assert_allclose(result.log_probs.numpy(), expected.log_probs.numpy(), rtol=1e-5)
    np.testing.assert_allclose(result.attention.numpy(), expected.attention.numpy(), atol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_zero_temperature_and_top_1_are_greedy_search(seed):
    model = ToyModel(seed=seed, sharpness=0.7, end_bias=-1.0)
    source = padded(SENTENCES)
    greedy = decode(model, source, Greedy())
    for strategy in (
        Sampling(temperature=0.0, seed=1),
        Sampling(temperature=-1.0, seed=1),
        Sampling(temperature=1e-6, seed=2),
        Sampling(temperature=1.0, top_k=1, seed=3),
        Sampling(temperature=5.0, top_k=1),
        Sampling(temperature=tf.constant([0.0, 1e-6, 0.0, 1e-6, 0.0]), seed=4),
    ):
        assert_same_result(decode(model, source, strategy), greedy)
    # The test is only meaningful if a real draw leaves the greedy path.
    drawn = decode(model, source, Sampling(seed=1))
    assert np.any(drawn.ids.numpy() != greedy.ids.numpy())


def test_a_fixed_seed_reproduces_and_seeds_differ():
    model = ToyModel(**FLAT)
    source = padded(SENTENCES)
    first = decode(model, source, Sampling(seed=7))
    assert_same_result(decode(model, source, Sampling(seed=7)), first)
    assert_same_result(decode(model, source, Sampling(seed=tf.constant(7))), first)
    others = [decode(model, source, Sampling(seed=seed)).ids.numpy() for seed in (8, 9, -7)]
    assert all(np.any(ids != first.ids.numpy()) for ids in others)
    # Unseeded calls draw anew (32 distinct sentences: equal draws would be a ~1e-9 coincidence).
    many = padded([[4 + i % 2, 1 + i % 3, 4 + i // 6 % 2, 5, 1 + i // 2 % 5] for i in range(32)])
    assert np.any(decode(model, many, Sampling()).ids.numpy() != decode(model, many, Sampling()).ids.numpy())


def test_a_sample_does_not_depend_on_the_rest_of_the_batch():
    model = ToyModel(**FLAT)
    strategy = Sampling(temperature=1.3, top_k=3, seed=11)
    together = decode(model, padded(SENTENCES), strategy)
    reversed_batch = decode(model, padded(SENTENCES[::-1]), strategy)
    distinct = set()
    for b, sentence in enumerate(SENTENCES):
        alone = decode(model, padded([sentence]), strategy)
        assert hypotheses(alone) == hypotheses(together, b) == hypotheses(reversed_batch, len(SENTENCES) - 1 - b)
        np.testing.assert_allclose(alone.log_probs[0], together.log_probs[b], rtol=1e-5)
        distinct.add(hypotheses(alone)[0])
    assert len(distinct) > 2, "the samples should be real draws"


def test_log_probs_are_the_models_untempered_ones():
    model = ToyModel(**FLAT)
    source = padded(SENTENCES)
    for strategy in (Sampling(seed=3), Sampling(temperature=2.0, top_k=2, seed=3), Sampling(temperature=0.4, seed=5)):
        result = decode(model, source, strategy, max_length=6)
        ids = result.ids.numpy()[:, 0]
        assert not np.any(np.isin(ids, [BOS_ID])) and np.all(ids[:, 0] != PAD_ID)
        scored = sequence_log_prob(model, source, result.ids[:, 0], append_end=False)
        np.testing.assert_allclose(scored, result.log_probs[:, 0], rtol=1e-5)
        np.testing.assert_array_equal(result.scores.numpy(), result.log_probs.numpy())
        ended = np.any(ids == EOS_ID, axis=1)
        np.testing.assert_array_equal(result.lengths.numpy()[~ended, 0], 6)


def chi_square_critical_value(degrees, p_value):
    """The chi-square quantile exceeded with probability `p_value` (Wilson and Hilferty, 1931)."""
    z = statistics.NormalDist().inv_cdf(1.0 - p_value)
    return degrees * (1.0 - 2.0 / (9 * degrees) + z * (2.0 / (9 * degrees)) ** 0.5) ** 3


def chi_square(counts, probabilities, draws):
    """The statistic over cells expected >= 5 times (the rest pooled into one cell) and its degrees."""
    expected = {tokens: p * draws for tokens, p in probabilities.items()}
    cells = [tokens for tokens, e in expected.items() if e >= 5]
    observed = [counts.get(tokens, 0) for tokens in cells]
    expected_cells = [expected[tokens] for tokens in cells]
    observed.append(draws - sum(observed))
    expected_cells.append(draws - sum(expected_cells))
    assert sum(counts.values()) == draws and set(counts) <= set(probabilities), "drew an impossible sentence"
    statistic = sum((o - e) ** 2 / e for o, e in zip(observed, expected_cells) if e > 0)
    return statistic, len(cells)


@pytest.mark.parametrize("temperature, top_k", [(1.0, 0), (0.6, 0), (1.5, 2)])
def test_samples_follow_the_models_distribution(temperature, top_k):
    # V = 5 leaves 3 producible tokens (UNK, EOS, 4): 31 sentences of at most 4 tokens.
    model = ToyModel(vocab_size=5, seed=0, sharpness=1.0)
    source, draws = [4, 1, 3, 4], 20000
    exact = sampling_distribution(model, np.array([source]), 4, temperature, top_k)
    assert (len(exact) == 31) == (top_k == 0) and abs(sum(exact.values()) - 1.0) < 1e-9
    # One sentence, one seed per row: 20000 independent draws in one batch.
    strategy = Sampling(temperature=temperature, top_k=top_k, seed=tf.range(draws))
    result = decode(model, np.tile(np.array([source], np.int32), [draws, 1]), strategy, max_length=4)
    ids, lengths = result.ids.numpy()[:, 0], result.lengths.numpy()[:, 0]
    counts = {}
    for row, length in zip(ids, lengths):
        tokens = tuple(int(v) for v in row[:length])
        counts[tokens] = counts.get(tokens, 0) + 1
    statistic, degrees = chi_square(counts, exact, draws)
    assert degrees >= 5
    assert statistic < chi_square_critical_value(degrees, 1e-3), (statistic, degrees)
    # The test can tell: the same draws against a neighbouring temperature's distribution fail it.
    wrong = sampling_distribution(model, np.array([source]), 4, temperature * 1.15, top_k)
    assert chi_square(counts, wrong, draws)[0] > chi_square_critical_value(degrees, 1e-6)


def test_keep_top_k_keeps_the_k_best_with_ties_to_the_lower_id():
    scores = tf.constant(
        [[0.25, 0.5, 0.5, -1.0, 0.5, float("-inf")], [3.0, 2.0, 1.0, 0.0, -1.0, -2.0]], tf.float32
    )
    inf = float("-inf")
    np.testing.assert_array_equal(
        keep_top_k(scores, 2).numpy(),
        [[inf, 0.5, 0.5, inf, inf, inf], [3.0, 2.0, inf, inf, inf, inf]],
    )
    np.testing.assert_array_equal(
        keep_top_k(scores, tf.constant([4, 0])).numpy(),
        [[0.25, 0.5, 0.5, inf, 0.5, inf], scores.numpy()[1]],
    )
    np.testing.assert_array_equal(keep_top_k(scores, 100).numpy(), scores.numpy())
    compiled = tf.function(keep_top_k, jit_compile=True)
    np.testing.assert_array_equal(compiled(scores, tf.constant(1)).numpy()[:, :2], [[inf, 0.5], [3.0, inf]])


def test_gumbel_noise_is_finite_for_every_hash_even_all_ones():
    # The all-ones hash once gave uniform 1.0 in float32 and noise +inf: a token of probability 1e-18,
    # or one outside top_k, was drawn once in 2**24 (seed 229781 below hit it).
    bits = tf.constant([0, 1, 255, 256, 2**31, 2**32 - 257, 2**32 - 256, 2**32 - 1], tf.uint32)
    noise = noise_from_bits(bits).numpy()
    assert np.all(np.isfinite(noise)) and np.all(np.diff(noise) >= 0), noise  # monotone in the top 24 bits
    assert noise[-1] == pytest.approx(-np.log(-np.log1p(-(2.0**-24))), rel=1e-3)


class EndAlmostSurely:
    """Every step: the end token has log-probability ~0, each other token -40 (p ~ 4e-18)."""

    vocab_size = 64

    def encode(self, source_ids):
        return {"mask": tf.not_equal(source_ids, 0)}, {"h": tf.zeros([tf.shape(source_ids)[0], 1])}

    def step(self, token_ids, state, memory):
        row = tf.nn.log_softmax(tf.where(tf.range(self.vocab_size) == EOS_ID, 0.0, -40.0))
        mask = tf.cast(memory["mask"], tf.float32)
        attention = tf.tile((mask / tf.reduce_sum(mask, 1, keepdims=True))[:, None, :], [1, tf.shape(token_ids)[1], 1])
        return tf.broadcast_to(row, tf.concat([tf.shape(token_ids), [self.vocab_size]], 0)), state, attention


@pytest.mark.parametrize("top_k", [0, 1, 2])
def test_a_seed_whose_noise_was_infinite_draws_the_end_token(top_k):
    for jit in (False, True):
        search = tf.function(lambda ids: decode(EndAlmostSurely(), ids, Sampling(top_k=top_k, seed=229781)).ids,
                             jit_compile=jit)
        assert search(np.array([[4, 5, 6]], np.int32)).numpy()[0, 0, 0] == EOS_ID


def test_rejects_a_negative_top_k():
    with pytest.raises(ValueError, match="top_k must be >= 0 .* received -1"):
        Sampling(top_k=-1)


def test_an_infinite_temperature_draws_uniformly_among_the_top_k_most_probable():
    # Tempered, every log-probability is 0: the top k must still be the k most probable tokens, not
    # the k lowest ids, and each of them is as likely as the others.
    model = ToyModel(vocab_size=5, seed=0, sharpness=1.0)
    source, draws = [4, 1, 3, 4], 20000
    exact = sampling_distribution(model, np.array([source]), 4, float("inf"), 2)
    strategy = Sampling(temperature=float("inf"), top_k=2, seed=tf.range(draws))
    result = decode(model, np.tile(np.array([source], np.int32), [draws, 1]), strategy, max_length=4)
    counts = {}
    for row, length in zip(result.ids.numpy()[:, 0], result.lengths.numpy()[:, 0]):
        tokens = tuple(int(v) for v in row[:length])
        counts[tokens] = counts.get(tokens, 0) + 1
    statistic, degrees = chi_square(counts, exact, draws)
    assert degrees >= 3
    assert statistic < chi_square_critical_value(degrees, 1e-3), (statistic, degrees)
    # A finite temperature's distribution over the same top 2 is told apart.
    wrong = sampling_distribution(model, np.array([source]), 4, 3.0, 2)
    assert chi_square(counts, wrong, draws)[0] > chi_square_critical_value(degrees, 1e-6)
