"""A beam step's 2K best extensions, found through block maxima, against a top-k over the sentence's whole
log-softmax (values, parents, tokens, tie order), with forbidden tokens, dead beams, padding and shortlists."""

import numpy as np
import pytest
import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding.extensions import BLOCK_SIZE, best_extensions


def reference(logits, live, beam, ids=None):
    """`(log_probs, parents, tokens)` `(B, 2K)`: top-k over `live + log_softmax` of every (beam, column)."""
    log_probs = live[:, :, None] + tf.nn.log_softmax(tf.constant(logits, tf.float64)).numpy()
    columns = np.arange(logits.shape[2])
    token_of = columns if ids is None else ids
    log_probs[:, :, np.isin(token_of, [PAD_ID, BOS_ID])] = -np.inf
    values, index = tf.math.top_k(log_probs.reshape(len(logits), -1), 2 * beam)  # ties: lower beam, then column
    index = index.numpy()
    return values.numpy(), index // logits.shape[2], token_of[index % logits.shape[2]]


def random_step(batch, beam, vocab, seed, scale=6.0):
    rng = np.random.default_rng(seed)
    logits = (rng.normal(size=(batch, beam, vocab)) * scale).astype(np.float32)
    live = (rng.normal(size=(batch, beam)) * 3 - 8).astype(np.float32)
    return rng, logits, live


def check(logits, live, beam, ids=None, function=best_extensions):
    token_ids = None if ids is None else (lambda columns: tf.gather(tf.constant(ids, tf.int32), columns))
    got = function(tf.constant(logits), tf.constant(live), beam, token_ids)
    values, parents, tokens = reference(logits, live, beam, ids)
    finite = np.isfinite(values)
    np.testing.assert_allclose(got.log_probs.numpy(), values.astype(np.float32), rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(got.parents.numpy()[finite], parents[finite])
    np.testing.assert_array_equal(got.tokens.numpy()[finite], tokens[finite])
    np.testing.assert_array_equal(got.is_end.numpy(), got.tokens.numpy() == EOS_ID)
    assert not np.isin(got.tokens.numpy()[finite], [PAD_ID, BOS_ID]).any()
    return got


@pytest.mark.parametrize("beam,vocab", [(5, 8000), (4, 1000), (3, 999), (5, 130), (2, 64), (5, 9)])
def test_the_best_extensions_of_the_whole_log_softmax(beam, vocab):
    rng, logits, live = random_step(3, beam, vocab, seed=beam * vocab)
    logits[0, :, EOS_ID] += 12.0  # end tokens among the best
    logits[1, :, PAD_ID] += 40.0  # forbidden tokens above every other: never chosen
    logits[1, :, BOS_ID] += 40.0
    live[2, 1:] = -np.inf  # one live hypothesis (the first step)
    check(logits, live, beam)


def test_one_beam_may_hold_every_best_extension():
    _, logits, live = random_step(2, 5, 3000, seed=3)
    live[:] = -100.0
    live[:, 2] = 0.0  # far above the others: its 10 best tokens are the sentence's 10 best
    logits[:, 2, 700:710] = 30.0 + np.arange(10)[::-1] / 4  # all in one block
    got = check(logits, live, 5)
    np.testing.assert_array_equal(got.parents.numpy(), np.full((2, 10), 2))


def test_ties_go_to_the_lower_beam_then_the_lower_column():
    logits = np.zeros((1, 3, 2 * BLOCK_SIZE + 5), np.float32)
    logits[0, :, [70, 10, 130]] = 5.0  # equal in every beam, across blocks
    live = np.zeros((1, 3), np.float32)
    got = check(logits, live, 3)
    np.testing.assert_array_equal(got.parents.numpy()[0], [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(got.tokens.numpy()[0], [10, 70, 130, 10, 70, 130])


def test_dead_beams_and_a_tiny_vocabulary_give_minus_inf_extensions_of_real_tokens():
    _, logits, live = random_step(2, 4, 5, seed=7)  # 3 producible tokens, 8 extensions asked for
    live[:, 1:] = -np.inf
    got = check(logits, live, 4)
    assert np.isinf(got.log_probs.numpy()[:, 3:]).all()
    assert (got.tokens.numpy() < 5).all() and (got.tokens.numpy() >= 0).all()  # a step can embed them


def test_shortlist_columns_map_to_their_ids():
    ids = np.array([PAD_ID, EOS_ID, *range(10, 10 + 2 * BLOCK_SIZE + 7)])  # ascending, PAD first, no BOS
    _, logits, live = random_step(2, 5, len(ids), seed=11)
    logits[:, :, 0] += 50.0  # PAD's column: forbidden
    logits[0, :, 1] += 10.0
    check(logits, live, 5, ids)


@pytest.mark.parametrize("vocab", [1000, 640])
def test_the_same_under_xla_and_with_an_unknown_width(vocab):
    _, logits, live = random_step(2, 5, vocab, seed=vocab)
    compiled = tf.function(lambda x, l: best_extensions(x, l, 5), jit_compile=True)
    unknown = tf.function(lambda x, l, k: best_extensions(x, l, k),
                          input_signature=[tf.TensorSpec([None, None, None]), tf.TensorSpec([None, None]),
                                           tf.TensorSpec([], tf.int32)])
    check(logits, live, 5, function=lambda x, l, k, ids: compiled(x, l))
    check(logits, live, 5, function=lambda x, l, k, ids: unknown(x, l, tf.constant(k)))


def test_bfloat16_logits_give_the_extensions_of_their_float32_values():
    _, logits, live = random_step(2, 5, 2000, seed=5)
    rounded = tf.cast(tf.cast(logits, tf.bfloat16), tf.float32).numpy()
    got = best_extensions(tf.constant(rounded, tf.bfloat16), tf.constant(live), 5)
    values, parents, tokens = reference(rounded, live, 5)
    np.testing.assert_array_equal(got.parents.numpy(), parents)
    np.testing.assert_array_equal(got.tokens.numpy(), tokens)
    np.testing.assert_allclose(got.log_probs.numpy(), values, atol=0.01)  # the softmax in bfloat16
