"""The threshold decision (issue 11): where to put the review threshold, and what it costs.

Contract: the engine behind ``calib route`` and ``calib compare`` and the Routing
page's decision card. Every result is a small frozen dataclass whose ``to_dict()``
gives strict JSON.

- :func:`recommend` (:mod:`.risk`): the threshold accepting the most items unseen
  with, at confidence ``1 - delta``, at most ``alpha`` of them wrong (fixed-sequence
  Clopper-Pearson testing, Learn-then-Test); ``guarantee=False`` for the
  point-estimate search, labelled as having no guarantee; ``procedure="fallback"``
  for a judge whose error need not fall as its confidence rises.
- :func:`costs` (:mod:`.costs`): the expected-cost curve with a bootstrap band, the
  cheapest threshold with intervals, savings, and the best threshold within capacity.
- :func:`per_group` (:mod:`.groups`): one threshold per group; a group its own items
  cannot certify sends every item to a person.
- :func:`compare_judges` (:mod:`.judges`): several judges at one target, paired on
  shared item ids.
- :func:`aurc` (:mod:`.aurc`): the area under the risk-coverage curve and its excess.
- :func:`decide` (:mod:`.decide`): all of the above for one dataset (``calib route --json``).
- :mod:`.two_thresholds`: two thresholds certified together by multi-risk Learn-then-Test;
  :mod:`.stability`: route stability of items judged several times; :mod:`.cascade`: the
  cheapest certified chain of judges.
"""

from __future__ import annotations

from calib.decision.aurc import AURC, aurc, oracle_aurc
from calib.decision.costs import Capacity, Cheapest, CostAnalysis, costs, parse_capacity
from calib.decision.decide import Decision, decide
from calib.decision.groups import GroupThreshold, PerGroup, per_group
from calib.decision.judges import JudgeComparison, JudgeRow, Paired, compare_judges, paired
from calib.decision.risk import (
    FALLBACK,
    FIXED_SEQUENCE,
    GUARANTEED,
    POINT,
    PROCEDURES,
    Recommendation,
    cp_upper,
    min_items,
    recommend,
)

__all__ = [
    "AURC", "FALLBACK", "FIXED_SEQUENCE", "GUARANTEED", "PROCEDURES", "Decision", "decide", "POINT", "Capacity", "Cheapest", "CostAnalysis", "GroupThreshold", "JudgeComparison",
    "JudgeRow", "Paired", "PerGroup", "Recommendation", "aurc", "compare_judges", "costs", "cp_upper",
    "min_items", "oracle_aurc", "paired", "parse_capacity", "per_group", "recommend",
]
