"""The table of an export's serving signatures: name, method, input specs, warmup inputs.

Every signature of the SavedModel is one entry of `SIGNATURES` and one method of
`zoo.export.ServingModule`, tied to its entry with `@serving_signature(name)` (the method
gets the entry's input signature). The export saves every entry, lists them in
`zoo_export.json`, and writes each one's warmup requests (`zoo.export.warmup`, which checks
them against the input specs): a new signature is a new entry and a new method, and it
cannot be exported without warmup requests. The signatures:

| signature | inputs | outputs |
|---|---|---|
| `serving_default` | `source` string (B) | `translation` string (B), `score` float32 (B) |
| `greedy` | `source` string (B) | `translation` string (B), `score` float32 (B) |
| `beam_search` | `source` (B), `beam_width` int32, `num_hypotheses` int32, `length_penalty` float32 | `translations` (B, N), `scores` (B, N), `log_probs` (B, N), `attention` (B, T_tgt, T_src), `source_tokens` (B, T_src), `target_tokens` (B, T_tgt) |
| `score` | `source` (B), `target` (B) | `log_prob` float32 (B) |
| `sample` | `source` (B), `temperature` float32, `top_k` int32, `seed` int32 | `translation` (B), `log_prob` float32 (B) |

The parameters of `beam_search` and `sample` are per-example inputs of unknown rank: a
scalar `()` (every sentence), or `(B,)` (one value per sentence, what TF Serving's
`--enable_batching` concatenates, and what REST row-format instances stack into).
"""

import dataclasses
from typing import Callable

import numpy as np
import tensorflow as tf

SOURCE = tf.TensorSpec([None], tf.string, name="source")
TARGET = tf.TensorSpec([None], tf.string, name="target")


def parameter(dtype, name):
    """A per-example parameter: a scalar or one value per sentence (unknown rank)."""
    return tf.TensorSpec(None, dtype, name=name)


@dataclasses.dataclass(frozen=True)
class SignatureSpec:
    """One serving signature.

    Attributes:
      name: the signature key in the SavedModel (what a request's `signature_name` says).
      method: the `ServingModule` method that computes it.
      inputs: the named `tf.TensorSpec`s of its inputs, in call order.
      warmup: `(sources, defaults) -> list of {input name: value}`: the inputs of its
        warmup requests, from a few source sentences (list of str) and the export's
        defaults (`ServingModule.settings()`).
    """

    name: str
    method: str
    inputs: tuple
    warmup: Callable

    @property
    def input_names(self):
        return tuple(spec.name for spec in self.inputs)


def _beam_search_warmup(sources, defaults):
    return [
        {
            "source": sources,
            "beam_width": np.int32(defaults["beam_width"]),
            "num_hypotheses": np.int32(1),
            "length_penalty": np.float32(defaults["length_penalty"]),
        }
    ]


def _sample_warmup(sources, defaults):
    # Scalar parameters, and one value per sentence: the form batched requests arrive in.
    rows = len(sources)
    return [
        {"source": sources, "temperature": np.float32(1.0), "top_k": np.int32(0), "seed": np.int32(0)},
        {
            "source": sources,
            "temperature": np.full([rows], 1.0, np.float32),
            "top_k": np.zeros([rows], np.int32),
            "seed": np.arange(rows, dtype=np.int32),
        },
    ]


_TABLE = (
    SignatureSpec(
        "serving_default",
        "serving_default",
        (SOURCE,),
        # Two batch sizes: the one-sentence request is the common one in serving.
        lambda sources, defaults: [{"source": sources}, {"source": sources[-1:]}],
    ),
    SignatureSpec("greedy", "greedy", (SOURCE,), lambda sources, defaults: [{"source": sources}]),
    SignatureSpec(
        "beam_search",
        "beam_search",
        (
            SOURCE,
            parameter(tf.int32, "beam_width"),
            parameter(tf.int32, "num_hypotheses"),
            parameter(tf.float32, "length_penalty"),
        ),
        _beam_search_warmup,
    ),
    SignatureSpec(
        "score", "score", (SOURCE, TARGET), lambda sources, defaults: [{"source": sources, "target": sources}]
    ),
    SignatureSpec(
        "sample",
        "sample",
        (SOURCE, parameter(tf.float32, "temperature"), parameter(tf.int32, "top_k"), parameter(tf.int32, "seed")),
        _sample_warmup,
    ),
)
SIGNATURES = {spec.name: spec for spec in _TABLE}  # name -> SignatureSpec, in export order


def serving_signature(name):
    """Ties a `ServingModule` method to the entry `name` of `SIGNATURES`.

    Returns a decorator that makes the method a `tf.function` with the entry's inputs as
    its input signature.

    Raises:
      ValueError: no entry `name`, or one whose `method` is another method.
    """
    if name not in SIGNATURES:
        raise ValueError(f"serving signature {name!r} is not in SIGNATURES; expected one of {list(SIGNATURES)}")
    spec = SIGNATURES[name]

    def register(method):
        if method.__name__ != spec.method:
            raise ValueError(f"serving signature {name!r} is computed by {spec.method!r}, not {method.__name__!r}")
        # No AutoGraph: the searches are written with tf.while_loop and tf.cond (see KerasTranslator).
        return tf.function(method, input_signature=list(spec.inputs), autograph=False)

    return register
