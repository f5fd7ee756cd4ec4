"""`load_translate_fn` on a SavedModel: a missing signature is a clear ValueError; the beam width it reports is the one that runs."""

import json
import os

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


@pytest.mark.parametrize("sampling", [{"temperature": 1e39, "top_k": 0, "seed": 0},
                                      {"temperature": 1.0, "top_k": 2**32 + 3, "seed": 0}])
def test_sampling_values_the_export_cannot_hold_are_refused(two_signatures, sampling):
    # The export's `sample` takes a float32 temperature and an int32 top_k: 1e39 read as inf, 2**32 + 3 as 3.
    with pytest.raises(ValueError, match=r"a temperature > 0 \(at most 3.402823e\+38\) and a top_k from 0 to 2147483647"):
        load_translate_fn(two_signatures, sampling=sampling)


def test_the_description_says_the_beam_width_the_export_clamps_to(two_signatures):
    extra = os.path.join(two_signatures, "assets.extra")
    os.makedirs(extra, exist_ok=True)
    with open(os.path.join(extra, "zoo_export.json"), "w", encoding="utf-8") as f:
        json.dump({"max_beam_width": 4, "length_penalty": 0.6}, f)
    try:
        translate, description = load_translate_fn(two_signatures, beam_width=1000)  # zoo-eval's "decoding"
        assert description.endswith(": beam_search (beam width 4, length penalty 0.6)"), description
        assert translate([b"x"]) == [b"x"]
    finally:
        os.remove(os.path.join(extra, "zoo_export.json"))
