"""Log-probabilities of the few next tokens a search reads, from logits, without the whole log-softmax.

A decoding step's logits are `(B, K, V)` over an 8k-32k vocabulary; the search keeps a
handful of tokens per row. `tf.nn.log_softmax` writes every `log p = x - logsumexp(x)`
in several passes over that tensor, most of them thrown away. Here the normalizer
`logsumexp(x) = max(x) - log(max(softmax(x)))` comes from one fused softmax pass
(`softmax(x)` at the argmax is `1 / sum(exp(x - max(x)))`, never below `1 / V`, so its
logarithm is exact to float32 rounding). Greedy and beam search read that softmax at the row
maximum they find anyway (`log_normalizer_at`; zoo/decoding/single_hypothesis.py and
zoo/decoding/extensions.py).
"""

import tensorflow as tf


def log_normalizer(logits, probs=None):
    """`logsumexp(logits)` over the last axis, keepdims: `(..., 1)` float32.

    Args:
        logits: float32 `(..., V)`: a row may hold -inf (a token it may not produce),
            not only -inf.
        probs: `tf.nn.softmax(logits)` when the caller has it already, else None.
    """
    probs = tf.nn.softmax(logits) if probs is None else probs
    largest = tf.reduce_max(logits, axis=-1, keepdims=True)
    return largest - tf.math.log(tf.reduce_max(probs, axis=-1, keepdims=True))


def log_normalizer_at(logits, column):
    """`log_normalizer(logits)`, float32 `(..., 1)`, for a caller that knows where each row's maximum is:
    the logit and the softmax read at that column, without two more reductions over the rows.

    Args:
        logits: float `(..., V)`, as for `log_normalizer` (any float dtype; the result is float32).
        column: int32 `(...)`: a column of each row's maximum.
    """
    batch_dims = len(logits.shape) - 1

    def at(values):
        return tf.cast(tf.gather(values, column[..., None], batch_dims=batch_dims), tf.float32)

    return at(logits) - tf.math.log(at(tf.nn.softmax(logits)))
