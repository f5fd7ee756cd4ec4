"""Search for translations with any zoo model's `encode`/`step` interface.

- `greedy_search(model, source_ids, max_length=None)`
- `beam_search(model, source_ids, beam_width, num_hypotheses, length_penalty,
  coverage_penalty=0.0, max_length=None, length_normalization="gnmt")`
- `sequence_log_prob(model, source_ids, target_ids)`: teacher-forced log p(y | x)
- `ranking_score(...)`: length normalization and coverage penalty
  (module `zoo.decoding.length_penalty`)

Both searches return a `DecodingResult` and run eagerly, in `tf.function` and
under `jit_compile=True`. The decoders are TensorFlow code (`tf.while_loop`,
`tf.gather(..., batch_dims=1)`): they are what the SavedModel export traces.
"""

from zoo.decoding.beam_search import beam_search
from zoo.decoding.constraints import MAX_LENGTH_FACTOR, MAX_LENGTH_OFFSET, decoding_limits
from zoo.decoding.greedy import greedy_search
from zoo.decoding.length_penalty import ranking_score
from zoo.decoding.result import DecodingResult
from zoo.decoding.scoring import sequence_log_prob

__all__ = [
    "DecodingResult",
    "MAX_LENGTH_FACTOR",
    "MAX_LENGTH_OFFSET",
    "beam_search",
    "decoding_limits",
    "greedy_search",
    "ranking_score",
    "sequence_log_prob",
]
