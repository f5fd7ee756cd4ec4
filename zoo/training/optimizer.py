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

    def update_step(self, gradient, variable, learning_rate):
        """Keras' Adam update in one fused kernel per variable (`ResourceApplyAdam`).

        The same arithmetic as `keras.optimizers.Adam.update_step` (its `alpha`, and epsilon
        added to `sqrt(v)`), but one pass over the variable, its moments and its gradient
        instead of about ten elementwise operations. Sparse gradients (`tf.IndexedSlices`)
        and AMSGrad take Keras' own update.
        """
        if isinstance(gradient, tf.IndexedSlices) or self.amsgrad:
            return super().update_step(gradient, variable, learning_rate)
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        index = self._get_variable_index(variable)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=self._momentums[index].handle, v=self._velocities[index].handle,
            beta1_power=tf.pow(beta_1, step), beta2_power=tf.pow(beta_2, step), lr=tf.cast(learning_rate, dtype),
            beta1=beta_1, beta2=beta_2, epsilon=tf.cast(self.epsilon, dtype), grad=tf.cast(gradient, dtype),
            use_locking=False)

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
