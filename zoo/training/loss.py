"""The training loss: cross-entropy averaged over the real target tokens of the global batch."""

import keras
import tensorflow as tf
from keras import ops

from zoo.constants import PAD_ID


@keras.saving.register_keras_serializable(package="zoo")
class TokenCrossEntropy(keras.losses.Loss):
    """Cross-entropy of the non-pad target tokens, summed, over the number of such tokens of the global batch.

    Under a `tf.distribute` strategy each replica holds a slice of the batch with its own
    number of tokens. Each replica divides its sum by the token count of all replicas
    (one all-reduce of a scalar), so the summed replica gradients are exactly those of
    the global batch, however the tokens fall. (Keras' own masked mean averages within
    each replica, then over replicas, which weighs a token by its replica's share.)
    On one device this is the usual masked mean.

    Call arguments:
      y_true: int `(B, T)` target ids, `pad_id` at padding.
      y_pred: float32 logits `(B, T, V)`.

    Returns:
      This replica's share of the global mean, a float32 scalar.
    """

    def __init__(self, pad_id=PAD_ID, name="token_cross_entropy", **kwargs):
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="sum", **kwargs)
        self.pad_id = pad_id

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")  # (B, T)
        losses = ops.sparse_categorical_crossentropy(y_true, ops.cast(y_pred, "float32"), from_logits=True)
        tokens = ops.sum(mask)
        context = tf.distribute.get_replica_context()
        if context is not None and context.num_replicas_in_sync > 1:
            tokens = context.all_reduce(tf.distribute.ReduceOp.SUM, tokens)
        return losses * mask / ops.maximum(tokens, 1.0)

    def get_config(self):
        config = super().get_config()
        config.pop("reduction", None)
        return dict(config, pad_id=self.pad_id)
