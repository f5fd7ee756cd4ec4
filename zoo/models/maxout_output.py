"""The deep output layer with maxout of RNNsearch and RNNenc."""

import keras
from keras import ops

from zoo.layers.linear import linear


def maxout(x, pool=2):
    """Maxout over consecutive groups of `pool` of the last axis: `(..., pool * L) -> (..., L)`."""
    shape = ops.shape(x)
    pooled = ops.reshape(x, tuple(shape[:-1]) + (x.shape[-1] // pool, pool))
    # `initial`: without it Keras' TensorFlow `max` asserts, eagerly, that the whole tensor is not
    # empty (an empty batch), where only the pooled axis needs to be.
    return ops.max(pooled, axis=-1, initial=float("-inf"))


@keras.saving.register_keras_serializable(package="zoo")
class MaxoutOutput(keras.layers.Layer):
    """`logits = W_v maxout(W_o x)`: a maxout hidden layer, then the vocabulary projection.

    Bahdanau et al. (2015), appendix A.2.2: `x = [s_i; E y_{i-1}; c_i]`, `l` maxout units
    over pairs.

    Args:
        output_units: maxout units `l`.
        vocab_size: target vocabulary size.

    Call arguments:
        features: `(..., F)`.

    Returns:
        logits `(..., vocab_size)`.
    """

    def __init__(self, output_units, vocab_size, **kwargs):
        super().__init__(**kwargs)
        self.output_units = int(output_units)
        self.vocab_size = int(vocab_size)
        self.deep_output = keras.layers.Dense(2 * self.output_units, name="deep_output", dtype=self.dtype_policy)
        self.output_projection = keras.layers.Dense(self.vocab_size, name="output_projection", dtype=self.dtype_policy)

    def build(self, features_shape):
        self.deep_output.build(features_shape)
        self.output_projection.build(tuple(features_shape[:-1]) + (self.output_units,))
        self.built = True

    def call(self, features):
        return self.output_projection(self.hidden(features))

    def hidden(self, features):
        """`maxout(W_o x)` `(..., output_units)`: what the vocabulary projection reads."""
        return maxout(self.deep_output(features))

    def get_config(self):
        config = super().get_config()
        config.update({"output_units": self.output_units, "vocab_size": self.vocab_size})
        return config


class MaxoutOutputHooks:
    """The output hooks of a `Seq2Seq` whose output layer is its `maxout_output`, reading
    `[features; E y_{i-1}]` (RNNsearch's and RNNenc's deep output)."""

    def output_logits(self, features, embedded, training=None):
        return self.maxout_output(self._deep_output_input(features, embedded, training))

    def output_hidden(self, features, embedded, training=None, kernels=None):
        inputs = self._deep_output_input(features, embedded, training)
        kernel = kernels and kernels.use("deep_output_kernel", None)
        if kernel is None:
            return self.maxout_output.hidden(inputs)
        return maxout(linear(inputs, kernel) + kernels.use("deep_output_bias", None))

    def add_output_kernels(self, kernels):
        deep_output = self.maxout_output.deep_output
        kernels.add("deep_output_kernel", deep_output.kernel)
        kernels.add("deep_output_bias", deep_output.bias)

    @property
    def vocabulary_projection(self):
        return self.maxout_output.output_projection

    def _deep_output_input(self, features, embedded, training):
        return self.output_dropout(ops.concatenate([features, embedded], axis=-1), training=training)
