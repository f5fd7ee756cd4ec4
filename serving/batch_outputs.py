"""Cuts the outputs of a merged batch back into each request's answer, as if it had run alone.

Rank-1 outputs split along dimension 0 and are done. The rank > 1 outputs of `beam_search`
(serving/README.md) are padded to the longest sentence of the batch they ran in, so each
request's part is also cut back to its own longest sentence, the shape a call of its own gives:

| output | axes after the batch axis |
|---|---|
| `translations`, `scores`, `log_probs` | hypotheses: fixed by the search parameters (`serving.batching` batches only requests whose parameters give the same count) |
| `source_tokens` | source tokens, padded with "", at least 1 wide (an all-padding row) |
| `target_tokens` | tokens of the best hypothesis, padded with "" |
| `attention` | target tokens, source tokens: zero past either end |
"""

import numpy as np

SOURCE = "source"
TARGET = "target"
FIXED = None

# Output name -> what each axis after the batch axis counts.
PADDED_AXES = {
    "translations": (FIXED,),
    "scores": (FIXED,),
    "log_probs": (FIXED,),
    "source_tokens": (SOURCE,),
    "target_tokens": (TARGET,),
    "attention": (TARGET, SOURCE),
}
# Axis kind -> (output whose non-empty tokens give a row's length, narrowest width a call answers).
_WIDTH_FROM = {SOURCE: ("source_tokens", 1), TARGET: ("target_tokens", 0)}


def can_split(output_specs: dict) -> bool:
    """True when every output (name -> `tf.TensorSpec`) is rank 1 or a padded output above."""
    for name, spec in output_specs.items():
        if spec.shape.rank == 1:
            continue
        axes = PADDED_AXES.get(name)
        if axes is None or spec.shape.rank != 1 + len(axes):
            return False
        if any(kind is not FIXED and _WIDTH_FROM[kind][0] not in output_specs for kind in axes):
            return False
    return True


def has_fixed_axes(output_specs: dict) -> bool:
    """True when an output has an axis that `split_outputs` does not cut (the hypotheses)."""
    return any(FIXED in PADDED_AXES.get(name, ()) for name, spec in output_specs.items() if spec.shape.rank != 1)


def split_outputs(outputs: dict, rows: list) -> list:
    """Merged outputs (name -> array, sum(rows) long) -> one dict per request of `rows[i]` rows."""
    parts, start = [], 0
    for count in rows:
        part = {name: array[start : start + count] for name, array in outputs.items()}
        start += count
        widths = {
            kind: max(narrowest, used_width(part[name]))
            for kind, (name, narrowest) in _WIDTH_FROM.items()
            if name in part and part[name].ndim == 2
        }
        for name, array in part.items():
            if array.ndim > 1 and name in PADDED_AXES:
                cut = tuple(slice(None) if kind is FIXED else slice(0, widths[kind]) for kind in PADDED_AXES[name])
                part[name] = array[(slice(None),) + cut]
        parts.append(part)
    return parts


def used_width(tokens: np.ndarray) -> int:
    """(B, T) tokens padded with empty strings -> 1 + the last column any row fills (0 if none)."""
    filled = np.flatnonzero((tokens != b"").any(axis=0)) if tokens.size else []
    return int(filled[-1]) + 1 if len(filled) else 0
