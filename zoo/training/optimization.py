"""Optimization of `zoo-train`: the learning-rate schedule, the masked accuracy, `compile_model`."""

import keras
import tensorflow as tf

from zoo.constants import PAD_ID
from zoo.training.loss import TokenCrossEntropy
from zoo.training.optimizer import CrossReplicaAdam, CrossReplicaLossScaleOptimizer


@keras.saving.register_keras_serializable(package="zoo")
class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup to `peak`, then constant, inverse square root, exponential or plateau decay.

    lr(step) = peak * min(1, step / warmup) * decay(step), never below `minimum`, with
      constant:     decay = 1
      inverse_sqrt: decay = sqrt(warmup / max(step, warmup))  (Vaswani et al., 2017)
      exponential:  decay = rate ** (max(step - warmup, 0) / decay_steps)
      plateau:      decay = `scale`, a variable that the dev evaluation multiplies by the
                    decay rate after each evaluation without BLEU progress (1 without one)
    """

    KINDS = ("constant", "inverse_sqrt", "exponential", "plateau")

    def __init__(self, peak, kind="inverse_sqrt", warmup_steps=0, decay_steps=1000, decay_rate=0.5,
                 minimum=0.0, scale=None):
        if kind not in self.KINDS:
            raise ValueError(f"unknown lr_schedule {kind!r}; expected one of {list(self.KINDS)}")
        self.peak = float(peak)
        self.kind = kind
        self.warmup_steps = int(warmup_steps)
        self.decay_steps = int(decay_steps)
        self.decay_rate = float(decay_rate)
        self.minimum = float(minimum)
        self.scale = scale  # not in the config: a restored schedule starts at 1

    def __call__(self, step):
        step = keras.ops.cast(step, "float32") + 1.0
        warmup = float(max(self.warmup_steps, 1))
        rate = keras.ops.minimum(1.0, step / warmup)
        if self.kind == "inverse_sqrt":
            rate = rate * keras.ops.sqrt(warmup / keras.ops.maximum(step, warmup))
        elif self.kind == "exponential":
            rate = rate * keras.ops.power(self.decay_rate, keras.ops.maximum(step - warmup, 0.0) / self.decay_steps)
        elif self.kind == "plateau" and self.scale is not None:
            rate = rate * keras.ops.cast(self.scale, "float32")
        return keras.ops.maximum(self.peak * rate, self.minimum)

    def get_config(self):
        return dict(peak=self.peak, kind=self.kind, warmup_steps=self.warmup_steps, decay_steps=self.decay_steps,
                    decay_rate=self.decay_rate, minimum=self.minimum)


def _pick(logits, ids):
    """`logits (..., V)` at `ids (..., 1)`. With TensorFlow a batched gather (Keras' reshapes the
    logits, and TensorFlow's graph optimizer then casts the model's logits once more)."""
    if keras.backend.backend() == "tensorflow":
        return tf.gather(logits, ids, batch_dims=len(ids.shape) - 1)
    return keras.ops.take_along_axis(logits, ids, axis=-1)


@keras.saving.register_keras_serializable(package="zoo")
class MaskedAccuracy(keras.metrics.Mean):
    """Share of non-pad target positions whose reference token has the highest logit.

    That is the arg-max prediction, except that a reference tied with another token for the
    highest logit counts as a hit. One reduction over the `(B, T, V)` logits: `argmax` takes
    twice as long on a CPU (and Keras' adds three passes telling -0.0 from 0.0). Its total
    and count are summed over replicas: the accuracy of the global batch.
    """

    def __init__(self, name="accuracy", pad_id=PAD_ID, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = keras.ops.cast(y_true, "int32")  # (B, T)
        reference = _pick(y_pred, keras.ops.expand_dims(y_true, -1))  # (B, T, 1)
        best = keras.ops.max(y_pred, axis=-1, keepdims=True)
        hits = keras.ops.cast(keras.ops.squeeze(reference >= best, -1), "float32")
        mask = keras.ops.cast(keras.ops.not_equal(y_true, self.pad_id), "float32")
        return super().update_state(hits, sample_weight=mask)

    def get_config(self):
        return dict(super().get_config(), pad_id=self.pad_id)


def compile_model(model, config, jit_compile=False, steps_per_execution=1, lr_scale=None):
    """Adam with gradient clipping and the config's schedule; token cross-entropy and accuracy.

    Call it under the strategy's scope. The loss and the clipping see the global batch
    whatever the number of replicas (`TokenCrossEntropy`, `CrossReplicaAdam`); a
    `mixed_float16` model gets dynamic loss scaling.

    Args:
      model: a built `zoo.models` model.
      config: the recipe (`learning_rate`, `lr_schedule`, `warmup_steps`, `decay_steps`,
        `decay_rate`, `min_learning_rate`, `clipnorm`, `global_clipnorm`,
        `loss_normalization`, `label_smoothing`).
      jit_compile: compile each training step with XLA.
      steps_per_execution: training steps per call from the host (many on a TPU).
      lr_scale: the float32 variable of the "plateau" schedule (`TrainingState.lr_scale`).
    """
    schedule = WarmupSchedule(config.learning_rate, config.lr_schedule, config.warmup_steps,
                              config.decay_steps, config.decay_rate, config.min_learning_rate, scale=lr_scale)
    optimizer = CrossReplicaAdam(schedule, clipnorm=config.clipnorm or None,
                                 global_clipnorm=config.get("global_clipnorm") or None)
    if model.dtype_policy.name == "mixed_float16":
        optimizer = CrossReplicaLossScaleOptimizer(optimizer)
    # .get: the workdirs of older versions have no such fields (their defaults are these).
    loss = TokenCrossEntropy(normalization=config.get("loss_normalization", "tokens"),
                             label_smoothing=config.get("label_smoothing", 0.0))
    model.compile(optimizer=optimizer, loss=loss, metrics=[MaskedAccuracy()],
                  jit_compile=jit_compile, steps_per_execution=steps_per_execution)
    model.optimizer.build(model.trainable_variables)  # its slots must exist before a restore
    return model
