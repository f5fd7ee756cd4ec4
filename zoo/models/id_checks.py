"""The token ids a user hands a model directly (`model((source_ids, target_in_ids))`), checked when eager.

`zoo.decoding` checks the ids of every search and of `sequence_log_prob`; a model called on its
own read them as Keras' embeddings do: a negative id as one counted from the end, a float id cut
to an integer, a target batch of one broadcast against every source. Here a call on concrete
values (eager TensorFlow, NumPy, JAX outside `jit`) gets a ValueError or TypeError naming the
input instead. Traced calls (`fit`, `tf.function`, `jax.jit`) are not checked: their ids come
from the zoo's own pipelines, and a check would cost every training step.
"""

import keras
import numpy as np
from keras import ops


def _concrete(tensor):
    """Whether `tensor` holds values now (not a graph or trace placeholder)."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.executing_eagerly() and not isinstance(tensor, keras.KerasTensor)
    if backend == "jax":
        import jax

        return not isinstance(tensor, jax.core.Tracer)
    return not isinstance(tensor, keras.KerasTensor)


def _check(ids, name, vocab_size):
    dtype = keras.backend.standardize_dtype(ids.dtype)
    if "int" not in dtype:
        raise TypeError(f"{name} must hold integer token ids, received dtype {dtype}.")
    shape = tuple(ids.shape)
    if len(shape) != 2:
        raise ValueError(f"{name} must have shape (batch, length), received shape {shape}.")
    if shape[1] == 0:  # the encoder's and the decoder's loops read a first step (TensorFlow's fail there)
        raise ValueError(f"{name} must have at least one position per sentence, received shape {shape}.")
    values = np.asarray(ops.convert_to_numpy(ids))
    bad = values[(values < 0) | (values >= vocab_size)]
    if bad.size:
        raise ValueError(f"{name} must be token ids in [0, {vocab_size}), received {int(bad[0])}.")


def checked_inputs(model, inputs):
    """`inputs` `(source_ids, target_in_ids, *rest)` as they are, after checking concrete ids against the
    model's vocabularies and each other's batch size. Anything but a pair or a triple (a tensor of source ids
    alone, traced or not) is a ValueError: a tensor's rows would be unpacked as the pair."""
    if not isinstance(inputs, (tuple, list)) or len(inputs) not in (2, 3):
        received = (f"one tensor of shape {tuple(inputs.shape)}" if hasattr(inputs, "shape")
                    else f"a {type(inputs).__name__} of {len(inputs)}" if isinstance(inputs, (tuple, list))
                    else f"a {type(inputs).__name__}")
        raise ValueError(f"inputs must be (source_ids, target_in_ids), int32 (B, S) and (B, T), received {received}; "
                         f"to translate source ids, use zoo.decoding.decode(model, source_ids, strategy).")
    source_ids, target_in_ids, *rest = inputs
    if _concrete(source_ids) and _concrete(target_in_ids):
        _check(source_ids, "source_ids", model.source_vocab_size)
        _check(target_in_ids, "target_in_ids", model.target_vocab_size)
        if source_ids.shape[0] != target_in_ids.shape[0]:
            raise ValueError(f"source_ids and target_in_ids must have as many sentences, received shapes "
                             f"{tuple(source_ids.shape)} and {tuple(target_in_ids.shape)}.")
    return (source_ids, target_in_ids, *rest)
