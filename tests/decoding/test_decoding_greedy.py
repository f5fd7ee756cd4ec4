"""Greedy search: argmax decoding, length limits, invariance, XLA, scores."""

import numpy as np
import tensorflow as tf
from decoding_toy_model import ALLOWED_TOKENS, MarkovModel, ToyModel, hypotheses, reference_score

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding import Greedy, greedy_search
from zoo.decoding.loop import SearchInputs
from zoo.decoding.single_hypothesis import _best_allowed


def padded(sentences):
    width = max(len(s) for s in sentences)
    return np.array([s + [0] * (width - len(s)) for s in sentences], np.int32)


SENTENCES = [[4, 5, 1, 4], [5], [1, 1, 5, 4, 4, 5, 4], [4, 4]]


def argmax_decode(model, sentence, max_length):
    """One sentence, one token at a time, in plain Python."""
    memory, state = model.encode(tf.constant([sentence], tf.int32))
    state = {"h": state["h"][:, None]}
    token, tokens, log_prob, rows = BOS_ID, [], 0.0, []
    while len(tokens) < max_length and (not tokens or tokens[-1] != EOS_ID):
        log_probs, state, attention = model.step(tf.constant([[token]]), state, memory)
        log_probs = log_probs.numpy()[0, 0]
        token = max(ALLOWED_TOKENS, key=lambda v: log_probs[v])
        tokens.append(token)
        log_prob += float(log_probs[token])
        rows.append(attention.numpy()[0, 0])
    return tokens, log_prob, np.array(rows)


def test_greedy_takes_the_most_probable_token_until_the_end_token():
    for seed in range(4):
        model = ToyModel(seed=seed, end_bias=-1.5)
        result = greedy_search(model, padded(SENTENCES))
        for b, sentence in enumerate(SENTENCES):
            tokens, log_prob, attention = argmax_decode(model, sentence, 2 * len(sentence) + 10)
            assert hypotheses(result, b) == [tuple(tokens)]
            np.testing.assert_allclose(result.log_probs[b, 0], log_prob, rtol=1e-5)
            np.testing.assert_allclose(
                result.attention.numpy()[b, 0, : len(tokens), : len(sentence)], attention, atol=1e-6
            )
            assert np.all(result.ids.numpy()[b, 0, len(tokens) :] == PAD_ID)


def test_greedy_never_produces_padding_or_start_tokens():
    model = MarkovModel({2: {PAD_ID: 0.5, BOS_ID: 0.3, 5: 0.15}, 5: {BOS_ID: 0.9, EOS_ID: 0.06}})
    result = greedy_search(model, padded([[4, 4]]))
    assert hypotheses(result) == [(5, EOS_ID)]
    np.testing.assert_allclose(result.log_probs[0, 0], np.log(0.15) + np.log(0.06), rtol=1e-5)


def test_greedy_stops_at_the_length_limit():
    model = ToyModel(seed=2, end_bias=-1e4)  # never ends
    result = greedy_search(model, padded([[4, 5, 1], [5]]))
    assert result.ids.shape == (2, 1, 2 * 3 + 10)
    np.testing.assert_array_equal(result.lengths.numpy(), [[16], [12]])
    assert not np.any(result.ids.numpy() == EOS_ID)
    fixed = greedy_search(model, padded([[4, 5, 1], [5]]), max_length=tf.constant(4))
    np.testing.assert_array_equal(fixed.lengths.numpy(), [[4], [4]])
    np.testing.assert_array_equal(fixed.ids.numpy()[:, :, :4], result.ids.numpy()[:, :, :4])


def test_greedy_is_the_same_alone_in_a_batch_eager_and_under_xla():
    model = ToyModel(seed=5, end_bias=-1.5)
    together = greedy_search(model, padded(SENTENCES))
    compiled = tf.function(lambda source: greedy_search(model, source), jit_compile=True)(padded(SENTENCES))
    graph = tf.function(
        lambda source: greedy_search(model, source), input_signature=[tf.TensorSpec([None, None], tf.int32)]
    )(padded(SENTENCES))
    for other in (compiled, graph):
        np.testing.assert_array_equal(other.ids.numpy(), together.ids.numpy())
        np.testing.assert_allclose(other.log_probs.numpy(), together.log_probs.numpy(), rtol=1e-5)
        np.testing.assert_allclose(other.attention.numpy(), together.attention.numpy(), atol=1e-6)
    for b, sentence in enumerate(SENTENCES):
        alone = greedy_search(model, padded([sentence]))
        assert hypotheses(alone) == hypotheses(together, b)
        np.testing.assert_allclose(alone.log_probs[0], together.log_probs[b], rtol=1e-5)


def test_greedy_scores_use_the_length_and_coverage_penalties():
    model = ToyModel(seed=1, end_bias=-1.0)
    source = padded(SENTENCES)
    plain = greedy_search(model, source)
    np.testing.assert_array_equal(plain.scores.numpy(), plain.log_probs.numpy())
    for alpha, normalization, beta in [(0.6, "gnmt", 0.0), (1.0, "average", 0.2)]:
        result = greedy_search(
            model, source, length_penalty=alpha, length_normalization=normalization, coverage_penalty=beta
        )
        np.testing.assert_array_equal(result.ids.numpy(), plain.ids.numpy())
        for b, sentence in enumerate(SENTENCES):
            coverage = result.attention.numpy()[b, 0].sum(0)
            expected = reference_score(
                float(result.log_probs[b, 0]), int(result.lengths[b, 0]), coverage, len(sentence),
                alpha, normalization, beta,
            )
            np.testing.assert_allclose(result.scores[b, 0], expected, rtol=1e-5)


def test_the_argmax_masks_pad_and_bos_only_in_a_batch_whose_maximum_lies_on_one():
    def argmax(x):
        return Greedy().choose(x, 0, ())

    rng = np.random.default_rng(3)
    logits = rng.normal(size=(6, 40)).astype(np.float32)
    logits[2, 25] = logits[2, 31] = 9.0  # a tie among allowed tokens: the lower one
    with_forbidden = logits.copy()
    with_forbidden[1, PAD_ID], with_forbidden[4, BOS_ID], with_forbidden[4, 12] = 12.0, 11.0, 10.0
    shortlist_ids = tf.constant(np.arange(0, 80, 2), tf.int32)  # column c is id 2c: PAD and BOS's columns differ
    for rows, output_ids in [(logits, None), (with_forbidden, None), (with_forbidden, shortlist_ids)]:
        inputs = SearchInputs(*[None] * 5, initial_state=None, output_ids=output_ids)
        ids = np.arange(40) if output_ids is None else output_ids.numpy()
        allowed = np.where((ids == PAD_ID) | (ids == BOS_ID), -np.inf, rows)
        expected_normalizer = np.log(np.exp(rows.astype(np.float64)).sum(-1, keepdims=True))
        eager = _best_allowed(argmax, tf.constant(rows), inputs)
        graph = tf.function(lambda x: _best_allowed(argmax, x, inputs))(tf.constant(rows))
        compiled = tf.function(lambda x: _best_allowed(argmax, x, inputs), jit_compile=True)(tf.constant(rows))
        for column, normalizer in (eager, graph, compiled):
            np.testing.assert_array_equal(column.numpy(), np.argmax(allowed, axis=-1))
            np.testing.assert_allclose(normalizer.numpy(), expected_normalizer, rtol=1e-5)
    assert _best_allowed(argmax, tf.constant(logits), SearchInputs(*[None] * 6))[0].numpy()[2] == 25
