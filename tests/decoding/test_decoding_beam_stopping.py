"""BeamSearch's stopping rules: the exact bound, and the approximate rule at the current length."""

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import MarkovModel, ToyModel, exhaustive_search, hypotheses

from zoo.data.vocabulary import EOS_ID
from zoo.decoding import BeamSearch, beam_search, decode, strategy_for

SOURCES = np.array([[4, 5, 1, 4], [5, 4, 0, 0], [1, 1, 5, 4]], np.int32)


class StepCounter:
    """A model wrapper counting `step` calls (eagerly: one per loop iteration)."""

    def __init__(self, model):
        self.model, self.steps = model, 0

    def encode(self, source_ids):
        return self.model.encode(source_ids)

    def step(self, token_ids, state, memory):
        self.steps += 1
        return self.model.step(token_ids, state, memory)


def _search(model, stopping, alpha, width=3, max_length=12):
    return beam_search(model, SOURCES, beam_width=width, num_hypotheses=2, length_penalty=alpha,
                       max_length=max_length, stopping=stopping)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_length_penalty_both_rules_are_the_same(seed):
    exact, approximate = StepCounter(ToyModel(seed=seed)), StepCounter(ToyModel(seed=seed))
    a, b = _search(exact, "exact", 0.0), _search(approximate, "approximate", 0.0)
    for name in ("ids", "lengths", "scores", "log_probs"):
        np.testing.assert_array_equal(getattr(a, name).numpy(), getattr(b, name).numpy())
    assert exact.steps == approximate.steps


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_with_a_length_penalty_approximate_stops_no_later_and_never_scores_higher(seed):
    exact, approximate = StepCounter(ToyModel(seed=seed)), StepCounter(ToyModel(seed=seed))
    a, b = _search(exact, "exact", 1.0), _search(approximate, "approximate", 1.0)
    assert approximate.steps <= exact.steps
    assert np.all(b.scores.numpy()[:, 0] <= a.scores.numpy()[:, 0] + 1e-6)


def test_approximate_stops_sooner_and_can_miss_the_best():
    # The case the exact bound exists for (test_decoding_beam_search.py): [EOS] (p = 0.6) finishes
    # first; scored at their current length the live [4, ...] stay behind it, so the approximate
    # rule stops at once, while with alpha = 2 the longest [4, 4, 4, 4, 4] wins in the end.
    model = MarkovModel({2: {EOS_ID: 0.6, 4: 0.4 - 1e-6}, 4: {4: 0.99, EOS_ID: 0.005}})
    source = np.array([[4, 5]], np.int32)
    best = exhaustive_search(model, source, 5, alpha=2.0)[0]
    exact, approximate = StepCounter(model), StepCounter(model)
    found = beam_search(exact, source, beam_width=2, length_penalty=2.0, max_length=5)
    quick = beam_search(approximate, source, beam_width=2, length_penalty=2.0, max_length=5, stopping="approximate")
    assert hypotheses(found) == [best[2]] == [(4, 4, 4, 4, 4)]
    assert hypotheses(quick) == [(EOS_ID,)]
    assert quick.scores.numpy()[0, 0] < found.scores.numpy()[0, 0]
    assert (approximate.steps, exact.steps) == (1, 5)


def test_the_rule_holds_in_a_graph_and_under_xla():
    model = ToyModel(seed=2)
    strategy = BeamSearch(3, num_hypotheses=2, length_penalty=1.0, stopping="approximate")
    eager = decode(model, SOURCES, strategy, max_length=12)
    for jit in (False, True):
        run = tf.function(lambda source: decode(model, source, strategy, max_length=12), jit_compile=jit)
        result = run(tf.constant(SOURCES))
        np.testing.assert_array_equal(result.ids.numpy(), eager.ids.numpy())
        np.testing.assert_allclose(result.scores.numpy(), eager.scores.numpy(), rtol=1e-5)


def test_bad_rule_is_refused_and_strategy_for_passes_it_on():
    with pytest.raises(ValueError, match=r"stopping must be one of \['exact', 'approximate'\], received 'early'"):
        BeamSearch(4, stopping="early")
    assert strategy_for(4, stopping="approximate").stopping == "approximate"
    assert strategy_for(4).stopping == "exact"
