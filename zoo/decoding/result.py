"""The record every decoding strategy returns."""

from typing import NamedTuple

import tensorflow as tf


class DecodingResult(NamedTuple):
    """Hypotheses found for a batch of sentences, best first.

    A NamedTuple, so `tf.nest`, `tf.function` outputs and SavedModel signatures
    take it as a structure of tensors.

    Fields (B sentences, N hypotheses each, T = the decoding buffer length, that is
    `max_length`, S = source length):
        ids: int32 `(B, N, T)`: target token ids; the end token is the last real
            token of a hypothesis that produced it (one stopped by `max_length`
            has none); padded with 0 after it.
        lengths: int32 `(B, N)`: number of real tokens, end token included.
        scores: float32 `(B, N)`: the ranking score (length-normalized, with the
            coverage penalty when one is asked for), descending along N.
        log_probs: float32 `(B, N)`: the plain sum of token log-probabilities,
            end token included.
        attention: float32 `(B, N, T, S)`: the attention weights each target token
            paid to the source; zero rows after the last real token.
    """

    ids: tf.Tensor
    lengths: tf.Tensor
    scores: tf.Tensor
    log_probs: tf.Tensor
    attention: tf.Tensor

    @classmethod
    def from_time_major(cls, ids, lengths, scores, log_probs, attention):
        """The record from the time-major histories a search writes.

        Args:
            ids: int32 `(T, B, N)`; attention: float32 `(T, B, N, S)`;
            lengths, scores, log_probs: `(B, N)`.
        """
        return cls(
            ids=tf.transpose(ids, [1, 2, 0]),
            lengths=lengths,
            scores=scores,
            log_probs=log_probs,
            attention=tf.transpose(attention, [1, 2, 0, 3]),
        )

    def trim(self):
        """The same record with T cut down to the longest hypothesis.

        Data-dependent shapes: use it eagerly or in a plain `tf.function`, not
        under `jit_compile=True`.
        """
        longest = tf.reduce_max(tf.concat([tf.reshape(self.lengths, [-1]), [0]], axis=0))
        return self._replace(ids=self.ids[:, :, :longest], attention=self.attention[:, :, :longest])
