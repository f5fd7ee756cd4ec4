"""The decoding seam: what a strategy implements, and the registry of strategies by name.

`zoo.decoding.decode` runs one loop for every strategy (zoo/decoding/loop.py). Per step
it calls `model.step` on the K live hypotheses of each sentence and hands the
log-probabilities to the strategy, which picks the next tokens, says which hypothesis
each one extends and which sentences are done, and keeps whatever else it needs in a
NamedTuple of its own (the "search state"). A new strategy is one subclass in one file:

    @dataclasses.dataclass(frozen=True, eq=False)
    class MyStrategy(DecodingStrategy, name="my_strategy"):
        ...

plus its import in zoo/decoding/__init__.py, which registers it.
"""

from typing import Any, NamedTuple

import tensorflow as tf

_STRATEGIES = {}


class Advance(NamedTuple):
    """What a strategy decides at one step.

    Fields:
        tokens: int32 `(B, K)`: the last token of each live hypothesis, the next input.
        parents: int32 `(B, K)`: the hypothesis each one extends (the decoder state is
            reordered by it), or None when hypothesis k always extends hypothesis k.
        done: bool `(B,)`: sentences whose search has ended (they never restart).
        search: the strategy's new search state.
    """

    tokens: tf.Tensor
    parents: Any
    done: tf.Tensor
    search: Any


class DecodingStrategy:
    """How to choose hypotheses from the model's next-token log-probabilities.

    Subclasses name themselves (`class Greedy(DecodingStrategy, name="greedy")`) to be
    listed by `names()` and built by `get(name, **kwargs)`, and implement:

    - `width()`: K, live hypotheses per sentence: a Python int or an int32 scalar tensor.
    - `start(inputs) -> search`: the initial search state (a nested structure of tensors)
      from the shared `SearchInputs`.
    - `advance(inputs, loop, logits, attention) -> Advance`: one step; `loop` is the
      `LoopState` before it, `logits` float32 `(B, K, V)` (the next-token log-probabilities
      up to a constant per row: `tf.nn.log_softmax(logits)` are they; see
      `zoo.decoding.log_softmax`) and `attention` float32 `(B, K, S)` are the model's
      outputs for `loop.tokens`.
    - `finish(inputs, steps, search) -> DecodingResult`: the hypotheses, best first.
    - `batch_axes(search)`: the batch axis of each tensor of the search state (the same
      structure: an int, or None for a tensor that is not per sentence); every tensor's
      leading dim by default. The loop drops finished sentences with it (their search
      state waits in a full-batch copy until `finish`), so `advance` sees only the
      sentences still searching, and `finish` gets the whole batch.
    - optionally `first_view(search)`: with K > 1, the search state as the first step's
      `advance` should see it when the model runs on one row per sentence (every hypothesis
      starts from the same state and token, so the other K - 1 rows would repeat it): its
      per-hypothesis tensors cut to their first hypothesis, `advance` returning K again. None
      (the default): the first step runs on all K rows like the others.
    """

    name = None

    def __init_subclass__(cls, name=None, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.name = name
        if name is not None:
            if name in _STRATEGIES:
                raise ValueError(
                    f"A decoding strategy named {name!r} is already registered: {_STRATEGIES[name]}."
                )
            _STRATEGIES[name] = cls

    def width(self):
        raise NotImplementedError(f"{type(self).__name__} must implement width().")

    def start(self, inputs):
        raise NotImplementedError(f"{type(self).__name__} must implement start(inputs).")

    def advance(self, inputs, loop, logits, attention):
        raise NotImplementedError(f"{type(self).__name__} must implement advance(...).")

    def finish(self, inputs, steps, search):
        raise NotImplementedError(f"{type(self).__name__} must implement finish(...).")

    def batch_axes(self, search):
        return tf.nest.map_structure(lambda _: 0, search)

    def first_view(self, search):
        return None


def names():
    """The registered strategy names, sorted."""
    return sorted(_STRATEGIES)


def get(name, **kwargs):
    """The strategy registered as `name`, built with `kwargs` (e.g. `get("sampling", top_k=10)`)."""
    if name not in _STRATEGIES:
        raise ValueError(f"Unknown decoding strategy {name!r}; expected one of {names()}.")
    return _STRATEGIES[name](**kwargs)
