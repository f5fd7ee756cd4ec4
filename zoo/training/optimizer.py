"""Adam and loss scaling that sum the replicas' gradients before clipping or checking them.

Keras clips (`clipnorm`) and, under `mixed_float16`, checks gradients for overflow on each
replica's partial gradient and sums them only afterwards; the update then depends on how
the batch was split, and replicas may disagree about skipping a step. Here the sum comes
first, once, so that a step on N replicas is the step on one device.
"""

import keras
import tensorflow as tf


def sum_over_replicas(grads):
    """The gradients summed over all replicas (one all-reduce); unchanged outside a multi-replica step."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return list(grads)
    present = [g for g in grads if g is not None]
    summed = iter(context.all_reduce(tf.distribute.ReduceOp.SUM, present) if present else [])
    return [None if g is None else next(summed) for g in grads]


@keras.saving.register_keras_serializable(package="zoo")
class CrossReplicaAdam(keras.optimizers.Adam):
    """`keras.optimizers.Adam` whose clipping sees the gradient of the global batch.

    Args:
      sum_replicas: sum the gradients over replicas in `apply`; a
        `CrossReplicaLossScaleOptimizer` around it sums them itself and turns this off.
      **kwargs: those of `keras.optimizers.Adam`.
    """

    def __init__(self, *args, sum_replicas=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.sum_replicas = sum_replicas

    def apply(self, grads, trainable_variables=None):
        if self.sum_replicas:
            grads = sum_over_replicas(grads)
        return super().apply(grads, trainable_variables)

    def _all_reduce_sum_gradients(self, grads_and_vars):
        return list(grads_and_vars)  # already summed, before clipping

    def get_config(self):
        return dict(super().get_config(), sum_replicas=self.sum_replicas)


@keras.saving.register_keras_serializable(package="zoo")
class CrossReplicaLossScaleOptimizer(keras.optimizers.LossScaleOptimizer):
    """Dynamic loss scaling (`mixed_float16`) that checks the summed gradients for overflow.

    Every replica then sees the same verdict and skips or applies the step with the others.

    Args:
      inner_optimizer: a `CrossReplicaAdam` (it stops summing: this optimizer has).
      **kwargs: those of `keras.optimizers.LossScaleOptimizer`.
    """

    def __init__(self, inner_optimizer, **kwargs):
        if not isinstance(inner_optimizer, CrossReplicaAdam):
            raise ValueError(f"inner_optimizer must be a CrossReplicaAdam, received {type(inner_optimizer).__name__}")
        super().__init__(inner_optimizer, **kwargs)
        inner_optimizer.sum_replicas = False

    def apply(self, grads, trainable_variables=None):
        return super().apply(sum_over_replicas(grads), trainable_variables)
