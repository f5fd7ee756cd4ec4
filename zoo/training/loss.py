"""The training loss: cross-entropy of the real target tokens, over the tokens (or sentences) of the global batch."""

import keras
import tensorflow as tf
from keras import ops

from zoo.constants import PAD_ID
from zoo.decoding.log_softmax import log_normalizer


@keras.saving.register_keras_serializable(package="zoo")
class TokenCrossEntropy(keras.losses.Loss):
    """Cross-entropy of the non-pad target tokens, summed, over the number of such tokens of the global batch.

    With `normalization="sentences"` the sum is divided by the number of sentences instead
    (OpenNMT-py's `normalization: sents`): long sentences weigh more, and the loss is that
    of a sentence. With `label_smoothing=eps` each token's target is `1 - eps` on the
    reference and `eps` spread evenly over the whole vocabulary (Szegedy et al., 2016):
    `(1 - eps) * -log p(y) + eps * mean_v(-log p(v))`.

    Under a `tf.distribute` strategy each replica holds a slice of the batch with its own
    number of tokens. Each replica divides its sum by the token count of all replicas
    (one all-reduce of a scalar), so the summed replica gradients are exactly those of
    the global batch, however the tokens fall. (Keras' own masked mean averages within
    each replica, then over replicas, which weighs a token by its replica's share.)
    On one device this is the usual masked mean.

    Args:
      pad_id: the padding id, left out of the loss.
      normalization: "tokens" or "sentences".
      label_smoothing: float in [0, 1).

    Call arguments:
      y_true: int `(B, T)` target ids, `pad_id` at padding.
      y_pred: float32 logits `(B, T, V)`.

    Returns:
      This replica's share of the global mean, a float32 scalar.
    """

    def __init__(self, pad_id=PAD_ID, normalization="tokens", label_smoothing=0.0, name="token_cross_entropy",
                 **kwargs):
        if normalization not in ("tokens", "sentences"):
            raise ValueError(f"normalization must be 'tokens' or 'sentences', received {normalization!r}")
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be >= 0 and < 1, received {label_smoothing!r}")
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="sum", **kwargs)
        self.pad_id = pad_id
        self.normalization = normalization
        self.label_smoothing = float(label_smoothing)

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")  # (B, T)
        losses = token_cross_entropy(y_true, ops.cast(y_pred, "float32"), self.label_smoothing)
        if self.normalization == "tokens":
            count = ops.sum(mask)
        else:  # rows with at least one real token
            count = ops.sum(ops.cast(ops.any(ops.not_equal(y_true, self.pad_id), axis=-1), "float32"))
        context = tf.distribute.get_replica_context()
        if context is not None and context.num_replicas_in_sync > 1:
            count = context.all_reduce(tf.distribute.ReduceOp.SUM, count)
        return losses * mask / ops.maximum(count, 1.0)

    def get_config(self):
        config = super().get_config()
        config.pop("reduction", None)
        return dict(config, pad_id=self.pad_id, normalization=self.normalization,
                    label_smoothing=self.label_smoothing)


def token_cross_entropy(labels, logits, label_smoothing=0.0):
    """`-log p(labels)` per token from float32 `logits (..., V)`, with `label_smoothing` eps:
    `(1 - eps) * -log p(y) + eps * mean_v(-log p(v))`, float32 `labels.shape`.

    With TensorFlow, one fused softmax pass gives both the loss and its gradient
    (`softmax - target`): `logsumexp(x) = max(x) - log(max(softmax(x)))`, exact to float32
    rounding since the largest probability is at least 1/V. TensorFlow's own sparse
    cross-entropy kernel takes about three times as long on a CPU for an 8k vocabulary.
    """
    if keras.backend.backend() != "tensorflow":
        losses = ops.sparse_categorical_crossentropy(labels, logits, from_logits=True)
        if label_smoothing:
            uniform = -ops.mean(ops.log_softmax(logits, axis=-1), axis=-1)  # cross-entropy against 1/V
            losses = (1.0 - label_smoothing) * losses + label_smoothing * uniform
        return losses
    return _fused_cross_entropy(logits, tf.cast(labels, tf.int32), float(label_smoothing))


def _fused_cross_entropy(logits, labels, smoothing):
    """`token_cross_entropy` of `logits (..., V)` and `labels (...)` with its gradient written out.

    The logits are read in their own shape (a reshape of the model's freshly cast logits
    lets TensorFlow's graph optimizer cast them once more for each reader).
    """
    batch_dims = len(labels.shape)

    @tf.custom_gradient
    def loss(logits):
        probs = tf.nn.softmax(logits)
        normalizer = log_normalizer(logits, probs)[..., 0]
        picked = tf.gather(logits, labels[..., None], batch_dims=batch_dims)[..., 0]
        losses = normalizer - (1.0 - smoothing) * picked
        if smoothing:
            losses -= smoothing * tf.reduce_mean(logits, axis=-1)

        def gradient(upstream):  # d/dx = upstream * (softmax(x) - target), target = (1 - eps) y + eps / V
            vocab = tf.shape(logits)[-1]
            grad = probs * upstream[..., None]
            if smoothing:
                grad -= smoothing / tf.cast(vocab, tf.float32) * upstream[..., None]
            rows, flat = tf.reshape(grad, [-1, vocab]), tf.reshape(labels, [-1])
            where = tf.stack([tf.range(tf.shape(flat)[0]), flat], axis=1)
            rows = tf.tensor_scatter_nd_sub(rows, where, (1.0 - smoothing) * tf.reshape(upstream, [-1]))
            return tf.reshape(rows, tf.shape(logits))

        return losses, gradient

    return loss(logits)
