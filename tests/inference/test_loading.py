"""`load_translate_fn` on a SavedModel that lacks a signature the flags ask for: a clear ValueError."""

import pytest
import tensorflow as tf

from zoo.inference import load_translate_fn


@pytest.fixture(scope="module")
def two_signatures(tmp_path_factory):
    """A SavedModel with only `serving_default` and `beam_search`, as `load_translate_fn` checks for."""
    module = tf.Module()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def default(source):
        return {"translation": source, "score": tf.zeros_like(source, tf.float32)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([], tf.int32),
                                  tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.float32)])
    def beam(source, beam_width, num_hypotheses, length_penalty):
        return {"translations": tf.expand_dims(source, 1)}

    module.default, module.beam = default, beam
    path = str(tmp_path_factory.mktemp("export") / "1")
    tf.saved_model.save(module, path, signatures={"serving_default": default, "beam_search": beam})
    return path


def test_a_missing_signature_is_named_with_those_there_are(two_signatures):
    assert load_translate_fn(two_signatures)[0]([b"x"]) == [b"x"]
    with pytest.raises(ValueError, match=r"has no 'greedy' signature \(it has \['beam_search', 'serving_default'\]"):
        load_translate_fn(two_signatures, beam_width=1)  # was a KeyError
    with pytest.raises(ValueError, match=r"has no 'sample' signature .*re-export it"):
        load_translate_fn(two_signatures, sampling={"temperature": 1.0, "top_k": 0, "seed": 0})
