"""The export's `sample` signature and the per-example parameters of `beam_search` and `sample`."""

import numpy as np
import pytest
import tensorflow as tf

from export_test_model import LENGTH_PENALTY, MAX_SOURCE_LENGTH, TEST_SOURCES, as_str
from zoo.decoding import Sampling, decode

TEMPERATURES = [1.0, 2.0, 0.0, 1.5, 3.0]
TOP_KS = [0, 3, 0, 2, 0]
SEEDS = [11, 12, 13, 14, 15]


def source_ids(source_tokenizer, sources):
    return source_tokenizer.encode(tf.constant(sources))[:, :MAX_SOURCE_LENGTH].to_tensor()


def keras_samples(parts, sources, temperature, top_k, seed):
    model, source_tokenizer, target_tokenizer = parts
    result = decode(model, source_ids(source_tokenizer, sources), Sampling(temperature, top_k, seed))
    return as_str(target_tokenizer.decode(result.ids[:, 0])), result.log_probs[:, 0].numpy()


def sample(loaded, sources, temperature, top_k, seed):
    return loaded.signatures["sample"](
        source=tf.constant(sources),
        temperature=tf.constant(temperature, tf.float32),
        top_k=tf.constant(top_k, tf.int32),
        seed=tf.constant(seed, tf.int32),
    )


@pytest.mark.parametrize(
    "temperature, top_k, seed",
    [(1.0, 0, 3), (2.5, 4, 9), (TEMPERATURES, TOP_KS, SEEDS)],
    ids=["scalars", "scalars-top-k", "per-example"],
)
def test_sample_equals_keras_decode_with_sampling(loaded, parts, temperature, top_k, seed):
    out = sample(loaded, TEST_SOURCES, temperature, top_k, seed)
    expected, log_probs = keras_samples(
        parts, TEST_SOURCES, tf.constant(temperature, tf.float32), tf.constant(top_k), tf.constant(seed)
    )
    assert as_str(out["translation"]) == expected
    np.testing.assert_allclose(out["log_prob"].numpy(), log_probs, rtol=1e-5, atol=1e-5)


def test_samples_differ_with_the_seed_and_the_temperature_zero_is_greedy(loaded):
    draws = {tuple(as_str(sample(loaded, TEST_SOURCES, 3.0, 0, seed)["translation"])) for seed in range(6)}
    assert len(draws) > 1, "a hot temperature should draw different samples for different seeds"
    greedy = loaded.signatures["greedy"](source=tf.constant(TEST_SOURCES))["translation"]
    assert as_str(sample(loaded, TEST_SOURCES, 0.0, 0, 5)["translation"]) == as_str(greedy)


def test_sample_log_prob_is_the_score_signatures_log_prob(loaded, parts):
    _, source_tokenizer, target_tokenizer = parts
    out = sample(loaded, TEST_SOURCES, TEMPERATURES, TOP_KS, SEEDS)
    scored = loaded.signatures["score"](source=tf.constant(TEST_SOURCES), target=out["translation"])
    # A sample cut at the length limit has no end token, which `score` always adds.
    lengths = np.minimum(source_tokenizer.encode(tf.constant(TEST_SOURCES)).row_lengths().numpy(), MAX_SOURCE_LENGTH)
    targets = target_tokenizer.encode(out["translation"]).to_list()
    ended = np.array([len(ids) < 2 * length + 10 for ids, length in zip(targets, lengths)])
    assert sum(ended) >= 3, ended
    np.testing.assert_allclose(
        out["log_prob"].numpy()[ended], scored["log_prob"].numpy()[ended], rtol=1e-4, atol=1e-4
    )
    assert np.all(out["log_prob"].numpy()[~ended] > scored["log_prob"].numpy()[~ended])


def test_a_row_samples_with_its_own_parameters_as_if_alone(loaded):
    batch = sample(loaded, TEST_SOURCES, TEMPERATURES, TOP_KS, SEEDS)
    for i, sentence in enumerate(TEST_SOURCES):
        alone = sample(loaded, [sentence], TEMPERATURES[i], TOP_KS[i], SEEDS[i])
        assert as_str(alone["translation"]) == as_str(batch["translation"][i : i + 1])
        np.testing.assert_allclose(alone["log_prob"].numpy(), batch["log_prob"].numpy()[i : i + 1], rtol=1e-5)


def beam(loaded, sources, beam_width, num_hypotheses, length_penalty):
    return loaded.signatures["beam_search"](
        source=tf.constant(sources),
        beam_width=tf.constant(beam_width, tf.int32),
        num_hypotheses=tf.constant(num_hypotheses, tf.int32),
        length_penalty=tf.constant(length_penalty, tf.float32),
    )


def test_a_row_beam_searches_with_its_own_parameters_as_if_alone(loaded):
    widths, hypotheses, penalties = [1, 4, 2, 4, 3], [1, 3, 2, 3, 1], [0.6, 0.0, 1.0, 0.0, 0.6]
    batch = beam(loaded, TEST_SOURCES, widths, hypotheses, penalties)
    assert batch["translations"].shape == (5, 3)  # the most hypotheses asked for
    for i, sentence in enumerate(TEST_SOURCES):
        alone = beam(loaded, [sentence], widths[i], hypotheses[i], penalties[i])
        n = hypotheses[i]
        assert as_str(batch["translations"][i, :n]) == as_str(alone["translations"][0])
        assert as_str(batch["translations"][i, n:]) == [""] * (3 - n)  # no hypothesis there
        for key in ("scores", "log_probs"):
            np.testing.assert_allclose(batch[key].numpy()[i, :n], alone[key].numpy()[0], rtol=1e-5, atol=1e-5)
            assert np.all(np.isneginf(batch[key].numpy()[i, n:]))
        t, s = alone["attention"].shape[1:]
        assert as_str(batch["target_tokens"][i, :t]) == as_str(alone["target_tokens"][0])
        np.testing.assert_allclose(batch["attention"].numpy()[i, :t, :s], alone["attention"].numpy()[0], atol=1e-6)
        assert not batch["attention"].numpy()[i, t:].any() and not batch["attention"].numpy()[i, :, s:].any()


def test_scalar_length_one_and_per_example_parameters_agree(loaded):
    scalar = beam(loaded, TEST_SOURCES, 3, 2, 0.6)
    one = beam(loaded, TEST_SOURCES, [3], [2], [0.6])
    rows = beam(loaded, TEST_SOURCES, [3] * 5, [2] * 5, [0.6] * 5)
    for out in (one, rows):
        assert as_str(out["translations"]) == as_str(scalar["translations"])
        np.testing.assert_array_equal(out["scores"].numpy(), scalar["scores"].numpy())
    assert as_str(sample(loaded, TEST_SOURCES, [1.5], [0], [4])["translation"]) == as_str(
        sample(loaded, TEST_SOURCES, 1.5, 0, 4)["translation"]
    )


def test_a_parameter_with_another_number_of_values_is_refused(loaded):
    with pytest.raises(tf.errors.InvalidArgumentError, match="beam_width: expected a scalar or one value"):
        beam(loaded, TEST_SOURCES, [3, 4], 1, 0.6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seed: expected a scalar or one value"):
        sample(loaded, TEST_SOURCES, 1.0, 0, [1, 2, 3])
    # A (1, B) matrix has B values, but it is not what batching concatenates: it was taken as (B,).
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"beam_width: expected a scalar or one value per "
                                                             r"source sentence \(a vector\)"):
        beam(loaded, TEST_SOURCES, [[3] * len(TEST_SOURCES)], 1, 0.6)


@pytest.mark.parametrize("penalty", [-100.0, -0.5, 10.5, 100.0])
def test_a_length_penalty_outside_its_range_is_refused(loaded, penalty):
    # -100 overflowed the GNMT divisor: every hypothesis scored -inf and the answer was empty translations;
    # 100 overflowed it the other way: every score read -0.0, tied, and the ranking was arbitrary.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"beam_search: length_penalty must be between 0 and 10.0; received.*\[" + rf"{penalty:g}\]"):
        beam(loaded, TEST_SOURCES, 3, 2, [0.6, 0.6, penalty, 0.6, 0.6])
    assert beam(loaded, TEST_SOURCES, 3, 1, 10.0)["scores"].shape == (len(TEST_SOURCES), 1)  # the bound itself
    assert as_str(beam(loaded, TEST_SOURCES, 3, 1, float("nan"))["translations"]) == as_str(
        beam(loaded, TEST_SOURCES, 3, 1, LENGTH_PENALTY)["translations"])  # a non-finite one: the export's


def test_sample_parameters_are_sanitized(loaded):
    nan = sample(loaded, TEST_SOURCES, float("nan"), 0, 2)  # falls back to temperature 1
    assert as_str(nan["translation"]) == as_str(sample(loaded, TEST_SOURCES, 1.0, 0, 2)["translation"])
    negative = sample(loaded, TEST_SOURCES, 2.0, -4, 2)  # top_k clamped to 0: the whole vocabulary
    assert as_str(negative["translation"]) == as_str(sample(loaded, TEST_SOURCES, 2.0, 0, 2)["translation"])
