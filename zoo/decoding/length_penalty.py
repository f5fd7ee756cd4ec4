"""Ranking scores of finished hypotheses: length normalization and coverage penalty.

A hypothesis of `t` tokens (end token included) with log-probability `log_prob`
ranks by

    score = log_prob / lp(t) + coverage_penalty(attention)

with `lp(t) = ((5 + t) / 6) ** alpha` ("gnmt", Wu et al., 2016, eq. 14) or
`lp(t) = t ** alpha` ("average": alpha = 1 is the plain per-token average), and
the GNMT coverage penalty `beta * sum_j log(min(sum_i a_ij, 1))` over the real
source positions j, where `a_ij` is the attention target token i paid to source
word j. alpha = 0 and beta = 0 rank by the raw log-probability.
"""

import tensorflow as tf

LENGTH_NORMALIZATIONS = ("gnmt", "average")

# log(0) for a never-attended source word would make the GNMT coverage penalty -inf
# (and 0 * -inf = NaN when beta = 0): floor the coverage so scores stay finite.
COVERAGE_FLOOR = 1e-6


def check_length_normalization(length_normalization):
    """Raises a ValueError unless `length_normalization` is "gnmt" or "average"."""
    if length_normalization not in LENGTH_NORMALIZATIONS:
        raise ValueError(
            f"length_normalization must be one of {LENGTH_NORMALIZATIONS}, "
            f"received {length_normalization!r}."
        )


def length_penalty(lengths, alpha, length_normalization="gnmt"):
    """The divisor `lp(t)` of the log-probability.

    Args:
        lengths: number of tokens `t`, end token included, any shape, int or float.
        alpha: the length penalty exponent, a float or float32 scalar tensor.
        length_normalization: "gnmt" for `((5 + t) / 6) ** alpha`, "average" for `t ** alpha`.

    Returns:
        float32 tensor of the shape of `lengths`; 1.0 everywhere when alpha = 0.
    """
    check_length_normalization(length_normalization)
    t = tf.cast(lengths, tf.float32)
    alpha = tf.cast(alpha, tf.float32)
    if length_normalization == "gnmt":
        return tf.pow((5.0 + t) / 6.0, alpha)
    # max(t, 1) keeps 0 ** alpha (an empty hypothesis) from dividing by zero.
    return tf.pow(tf.maximum(t, 1.0), alpha)


def coverage_penalty(coverage, source_mask, beta):
    """GNMT coverage penalty `beta * sum_j log(min(coverage_j, 1))` over real source words.

    Args:
        coverage: float32 `(..., S)`: attention summed over the target tokens.
        source_mask: bool or float `(B, S)` broadcastable to `coverage` after
            inserting the hypothesis axes (pass it already shaped, e.g. `(B, 1, S)`).
        beta: the coverage penalty weight (>= 0), a float or float32 scalar tensor.

    Returns:
        float32 `(...)`, <= 0 for beta >= 0.
    """
    beta = tf.cast(beta, tf.float32)
    clipped = tf.clip_by_value(coverage, COVERAGE_FLOOR, 1.0)
    per_word = tf.math.log(clipped) * tf.cast(source_mask, tf.float32)
    return beta * tf.reduce_sum(per_word, axis=-1)


def ranking_score(
    log_probs,
    lengths,
    alpha=0.0,
    length_normalization="gnmt",
    coverage=None,
    source_mask=None,
    beta=0.0,
):
    """`log_probs / lp(lengths) + coverage_penalty`, the score finished hypotheses rank by.

    Args:
        log_probs: float32 `(...)` summed token log-probabilities, end token included.
        lengths: `(...)` token counts, end token included.
        alpha, length_normalization: see `length_penalty`.
        coverage, source_mask, beta: see `coverage_penalty`; the penalty is skipped
            when `coverage` is None.

    Returns:
        float32 `(...)`.
    """
    score = log_probs / length_penalty(lengths, alpha, length_normalization)
    if coverage is not None:
        score = score + coverage_penalty(coverage, source_mask, beta)
    return score
