"""Sampling: each next token drawn from the model's distribution, tempered and cut to the top k."""

import dataclasses
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

from zoo.decoding.arguments import assert_number, check_number, int32_clamped, per_sentence
from zoo.decoding.history import check_alignments
from zoo.decoding.single_hypothesis import SingleHypothesisSearch

NEG_INF = float("-inf")

# murmur3's 32-bit finalizer constants and the golden-ratio increment: odd, well-mixed words.
_MIX_1, _MIX_2, _GOLDEN = 0x85EBCA6B, 0xC2B2AE35, 0x9E3779B9


def _u32(value):
    """`value` (any int dtype, Python int) as uint32, modulo 2 ** 32."""
    return tf.cast(tf.cast(value, tf.int64), tf.uint32)


def mix32(x):
    """murmur3's finalizer: a bijection of uint32 in which every output bit depends on every input bit."""
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u32(16)))
    x = x * _u32(_MIX_1)
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u32(13)))
    x = x * _u32(_MIX_2)
    return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u32(16)))


def sentence_keys(source_ids, source_mask, seed):
    """uint32 `(B,)`: one random key per sentence, from `seed` and the sentence's own tokens.

    Padding and the sentence's row in the batch do not enter, so a sentence draws the
    same sample alone or in any batch; identical sentences with the same seed draw
    the same sample.

    Args:
        source_ids: int32 `(B, S)`; source_mask: bool `(B, S)`, True at real tokens.
        seed: int scalar or `(B,)`.
    """
    positions = mix32(_u32(tf.range(tf.shape(source_ids)[1])))  # (S,)
    items = mix32(tf.bitwise.bitwise_xor(positions[None, :], _u32(source_ids)))  # (B, S)
    content = tf.reduce_sum(tf.where(source_mask, items, tf.zeros_like(items)), axis=1)  # sum mod 2 ** 32
    seed = tf.broadcast_to(_u32(seed), tf.shape(content))
    return mix32(mix32(tf.bitwise.bitwise_xor(seed, _u32(_GOLDEN))) + content)


def gumbel_noise(keys, step, token_ids):
    """float32 `(B, V)` standard Gumbel noise, a function of each sentence's key, the step and the token.

    Args:
        keys: uint32 `(B,)` from `sentence_keys`; step: int32 scalar; token_ids: int32 `(V,)`,
            the token of each column (`tf.range(V)`, or a shortlist's ids: the same noise per id).
    """
    step_keys = mix32(keys + _u32(step) * _u32(_GOLDEN))  # (B,)
    tokens = mix32(_u32(token_ids) * _u32(_GOLDEN))  # (V,)
    return noise_from_bits(mix32(tf.bitwise.bitwise_xor(step_keys[:, None], tokens[None, :])))  # (B, V)


def noise_from_bits(bits):
    """Standard Gumbel noise, float32, from uint32 hash bits (their top 24), finite for every value."""
    # 24 bits, centred in their interval: uniform in (0, 1), both logs finite. Float32 rounds the top one,
    # 2**24 - 0.5, up to 2**24 (uniform 1, noise +inf: a token of any probability, even outside top_k, won
    # once in 2**24 draws): it is held at the largest float32 below 1, every other draw as it was.
    uniform = (tf.cast(tf.bitwise.right_shift(bits, _u32(8)), tf.float32) + 0.5) / 2.0**24
    return -tf.math.log(-tf.math.log(tf.minimum(uniform, 1.0 - 2.0**-24)))


def keep_top_k(scores, k):
    """`scores` float32 `(B, V)` with all but the `k` highest of each row set to -inf.

    Ties are broken by the lower token id, as `tf.math.top_k` does. `k` is an int scalar
    or `(B,)`; `k <= 0` keeps the whole row.
    """
    vocab_size = tf.shape(scores)[1]
    k = tf.broadcast_to(tf.cast(k, tf.int32), tf.shape(scores)[:1])
    k = tf.where(k > 0, tf.minimum(k, vocab_size), vocab_size)[:, None]  # (B, 1)
    ranked = tf.sort(scores, axis=1, direction="DESCENDING")
    kth = tf.gather(ranked, k - 1, batch_dims=1)  # (B, 1): the k-th highest score
    above = scores > kth
    tied = tf.equal(scores, kth)
    room = k - tf.reduce_sum(tf.cast(above, tf.int32), axis=1, keepdims=True)
    keep = above | (tied & (tf.cumsum(tf.cast(tied, tf.int32), axis=1) <= room))
    return tf.where(keep, scores, NEG_INF)


class Draw(NamedTuple):
    """What sampling carries from step to step, per sentence `(B,)` but for `token_ids`.

    Fields:
        keys: uint32 `(B,)` from `sentence_keys`; temperature: float32 `(B,)`; top_k: int32 `(B,)`;
        token_ids: int32 `(M,)`: the shortlist's ids of the columns (their noise is that of the
            id), or `()` without a shortlist.
    """

    keys: tf.Tensor
    temperature: tf.Tensor
    top_k: tf.Tensor
    token_ids: Any


@dataclasses.dataclass(frozen=True, eq=False)
class Sampling(SingleHypothesisSearch, name="sampling"):
    """Draws each next token from `softmax(log p(. | y<t, x) / temperature)` over the top k tokens.

    Ancestral sampling with the Gumbel-max trick: the token is the argmax of the
    tempered log-probabilities plus standard Gumbel noise, an exact draw from their
    softmax. The noise is a hash of (seed, the sentence's own tokens, step, token id),
    so a fixed seed reproduces every sample eagerly, in `tf.function` and under XLA,
    and a sentence's sample does not depend on the rest of the batch (identical
    sentences with one seed draw the same sample: give them different seeds, e.g. a
    `(B,)` seed, to draw several samples of one sentence). The reported `log_probs`
    are the model's own, untempered and unrestricted (equal to `sequence_log_prob`),
    and `scores` equal them.

    Args:
        temperature: float scalar or `(B,)`; 1 samples from the model, lower is
            peakier, `temperature <= 0` is greedy search exactly (argmax), and an
            infinite one draws uniformly among the tokens `top_k` keeps.
        top_k: int scalar or `(B,)`: only the `top_k` most probable tokens may be
            drawn; 0 allows the whole vocabulary (a known negative value is an
            error, a run-time one counts as 0).
        seed: None (a new random seed per call) or an int scalar or `(B,)`.
        alignments: False keeps no attention history (the result's `attention` is zeros).

    References: Maddison et al., 2014, "A* Sampling" (the Gumbel-max trick); Fan et al.,
    2018, "Hierarchical Neural Story Generation" (top-k sampling).
    """

    temperature: Any = 1.0
    top_k: Any = 0
    seed: Any = None
    alignments: bool = True

    def __post_init__(self):
        check_alignments(self.alignments)
        check_number(self.temperature, "temperature")
        check_number(self.top_k, "top_k", integer=True)
        if self.seed is not None:
            check_number(self.seed, "seed", integer=True)
        top_k = tf.get_static_value(self.top_k)
        if top_k is not None and np.any(np.asarray(top_k) < 0):
            raise ValueError(f"top_k must be >= 0 (0: the whole vocabulary), received {top_k!r}.")

    def start_choice(self, inputs):
        seed = self.seed
        if seed is None:
            seed = tf.random.uniform([], 0, np.iinfo(np.int32).max, dtype=tf.int32)
        batch = inputs.batch_size
        assert_number(self.temperature, "temperature")
        return Draw(
            keys=sentence_keys(inputs.source_ids, inputs.source_mask, per_sentence(seed, batch, "seed")),
            temperature=per_sentence(tf.cast(self.temperature, tf.float32), batch, "temperature"),
            top_k=per_sentence(int32_clamped(self.top_k), batch, "top_k"),  # past the vocabulary: all of it
            token_ids=() if inputs.output_ids is None else inputs.output_ids,  # a column's noise is its id's
        )

    def choice_axes(self, choice):
        shortlisted = not isinstance(choice.token_ids, tuple)  # its ids are not per sentence
        return choice._replace(keys=0, temperature=0, top_k=0, token_ids=None if shortlisted else ())

    def choose(self, log_probs, step, choice):
        token_ids = tf.range(tf.shape(log_probs)[1]) if isinstance(choice.token_ids, tuple) else choice.token_ids
        temperature = choice.temperature[:, None]  # (B, 1)
        sampled = temperature > 0
        # Shifted by the row maximum, so that the best token stays finite for any temperature.
        shifted = log_probs - tf.reduce_max(log_probs, axis=1, keepdims=True)
        static_top_k = tf.get_static_value(self.top_k)
        if static_top_k is None or np.any(static_top_k != 0):  # a known 0 skips the sort
            # The k most probable before tempering: a huge or infinite temperature makes them all 0.
            shifted = keep_top_k(shifted, choice.top_k)
        tempered = tf.where(tf.math.is_finite(shifted), shifted / tf.where(sampled, temperature, 1.0), NEG_INF)
        drawn = tf.argmax(tempered + gumbel_noise(choice.keys, step, token_ids), axis=1, output_type=tf.int32)
        greedy = tf.argmax(log_probs, axis=1, output_type=tf.int32)
        return tf.where(sampled[:, 0], drawn, greedy)
