"""Search for translations with any zoo model's `encode`/`step` interface.

- `decode(model, source_ids, strategy, max_length=None) -> DecodingResult`, with a strategy:
  `Greedy()`, `BeamSearch(beam_width, num_hypotheses=1, length_penalty=0.6,
  coverage_penalty=0.0, length_normalization="gnmt")`, `Sampling(temperature=1.0,
  top_k=0, seed=None)`; `strategy_for(beam_width, ...)` picks greedy or beam search
  for a beam width, `names()` / `get(name, **kwargs)` list and build strategies by name.
- `greedy_search(model, source_ids, ...)`, `beam_search(model, source_ids, ...)`:
  the same as `decode` with `Greedy` / `BeamSearch`.
- `sequence_log_prob(model, source_ids, target_ids)`: teacher-forced log p(y | x)
- `Shortlist(table)`: vocabulary selection (`decode(..., shortlist=...)`): each sentence's
  output layer restricted to target ids learned for its source tokens (`zoo.data.shortlist`)
- `ranking_score(...)`: length normalization and coverage penalty
  (module `zoo.decoding.length_penalty`)

Every strategy runs eagerly, in `tf.function` and under `jit_compile=True`. The
decoders are TensorFlow code (`tf.while_loop`, `tf.gather(..., batch_dims=1)`): they
are what the SavedModel export traces. A new strategy is one file (a
`DecodingStrategy` subclass, see zoo/decoding/strategy.py) and its import below.
"""

from zoo.decoding.beam_search import BeamSearch, beam_search
from zoo.decoding.choice import strategy_for
from zoo.decoding.constraints import MAX_LENGTH_FACTOR, MAX_LENGTH_OFFSET, decoding_limits
from zoo.decoding.greedy import Greedy, greedy_search
from zoo.decoding.length_penalty import ranking_score
from zoo.decoding.loop import decode
from zoo.decoding.result import DecodingResult
from zoo.decoding.sampling import Sampling
from zoo.decoding.scoring import sequence_log_prob
from zoo.decoding.shortlist import Shortlist
from zoo.decoding.strategy import DecodingStrategy, get, names

__all__ = [
    "BeamSearch",
    "DecodingResult",
    "DecodingStrategy",
    "Greedy",
    "MAX_LENGTH_FACTOR",
    "MAX_LENGTH_OFFSET",
    "Sampling",
    "Shortlist",
    "beam_search",
    "decode",
    "decoding_limits",
    "get",
    "greedy_search",
    "names",
    "ranking_score",
    "sequence_log_prob",
    "strategy_for",
]
