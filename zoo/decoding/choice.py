"""The one home of the greedy-versus-beam choice that a beam width flag implies."""

import numbers

from zoo.constants import DEFAULT_LENGTH_PENALTY
from zoo.decoding.beam_search import BeamSearch
from zoo.decoding.arguments import static_int
from zoo.decoding.greedy import Greedy


def strategy_for(beam_width, num_hypotheses=1, length_penalty=DEFAULT_LENGTH_PENALTY, coverage_penalty=0.0,
                 stopping="exact", alignments=True):
    """`Greedy` when `beam_width` is the Python int 1, else `BeamSearch(beam_width, ...)`.

    Greedy search is the cheaper loop for width 1 (no top-k, no trace-back); a tensor
    width is decided only at run time, so it always gets `BeamSearch`. The penalties
    go to `Greedy` too, where they only change the reported scores, so that scores
    compare across widths.

    Args:
        beam_width: a Python int >= 1 or an int32 scalar tensor.
        num_hypotheses, length_penalty, coverage_penalty, stopping, alignments: see `BeamSearch`.
    """
    is_one = isinstance(beam_width, numbers.Integral) and not isinstance(beam_width, bool) and beam_width == 1
    if is_one:
        static_int(num_hypotheses, "num_hypotheses", minimum=1)
        return Greedy(length_penalty=length_penalty, coverage_penalty=coverage_penalty, alignments=alignments)
    return BeamSearch(beam_width, num_hypotheses, length_penalty, coverage_penalty, stopping=stopping,
                      alignments=alignments)
