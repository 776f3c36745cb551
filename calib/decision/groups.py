"""One review threshold per group (subject, task, source) under the same guarantee.

Contract: :func:`per_group` returns a :class:`PerGroup` whose ``to_dict()`` has
``per_group`` (one entry per group: ``group``, ``threshold``, ``accepted``,
``error_upper``, ``pooled_fallback``, ``certified``, ``fallback``, ``pooled_error_upper``)
and ``per_group_gain``.

What is guaranteed
------------------
Each group's threshold is certified on that group's items alone by the
fixed-sequence procedure of :mod:`calib.decision.risk`: with probability at least
``1 - delta`` the error among *that group's* accepted items is at most ``alpha``
(a guarantee per group, each at ``1 - delta``). With ``simultaneous=True`` each
group is certified at ``delta / G`` (Bonferroni over the ``G`` groups that are
certified on their own), so that with probability at least ``1 - delta`` every
group's guarantee holds at once.

Fallback rule
-------------
A group with fewer than ``min_items`` items (default: :func:`calib.decision.risk.min_items`,
the fewest that could certify anything even with no error: 59 at
``alpha = delta = 0.05``), or whose items certify no threshold, sends every item to a
person (``threshold`` ``None``, flagged ``pooled_fallback`` with its ``reason``; the key
keeps its name for scripts). It never inherits the pooled threshold: the pooled
guarantee is over all items, and a group accepted at it can be wrong far more often
than ``alpha`` (issue 22: a group's guarantee held in 31-49% of datasets that way).
Every item accepted unseen is then accepted under its own group's certificate, so
with ``simultaneous=True`` the error among all accepted items is at most ``alpha`` too.
Such a group has no ``error_upper`` (nothing accepted); ``pooled_error_upper`` is
its own Clopper-Pearson bound at the pooled threshold, for information (what the
pooled threshold would have accepted).

The gain is the items accepted unseen with the per-group thresholds minus those
accepted with the single pooled threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from calib.dataset import Data, table_and_rows
from calib.decision.risk import (
    CONFIDENCE,
    TARGET,
    Recommendation,
    bound_at,
    check_levels,
    min_items,
    recommend,
)
from calib.errors import CalibError
from calib.maps import CalibrationMap
from calib.numbers import finite_or_none
from calib.wording import short_pct


@dataclass(frozen=True)
class GroupThreshold:
    """One group's threshold (``None``: every item to a person) and what it does."""

    group: str
    threshold: float | None
    total: int
    accepted: int
    errors: int
    error_upper: float | None
    pooled_fallback: bool
    reason: str
    pooled_error_upper: float | None = None  # an uncertified group's own bound at the pooled threshold

    @property
    def certified(self) -> bool:
        """The group's own items certified its threshold (else every item goes to a person)."""
        return not self.pooled_fallback

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "threshold": finite_or_none(self.threshold), "accepted": self.accepted,
                "error_upper": finite_or_none(self.error_upper), "pooled_fallback": self.pooled_fallback,
                "total": self.total, "errors": self.errors, "reason": self.reason, "certified": self.certified,
                "fallback": None if self.certified else "review everything",
                "pooled_error_upper": finite_or_none(self.pooled_error_upper)}


@dataclass(frozen=True)
class PerGroup:
    """Per-group thresholds, the pooled recommendation and the gain over it."""

    groups: tuple[GroupThreshold, ...]
    pooled: Recommendation
    accepted_pooled: int
    confidence_each: float
    simultaneous: bool
    min_items: int

    @property
    def accepted(self) -> int:
        return sum(g.accepted for g in self.groups)

    @property
    def gain(self) -> int:
        return self.accepted - self.accepted_pooled

    @property
    def message(self) -> str:
        fb = sum(g.pooled_fallback for g in self.groups)
        how = "all groups at once" if self.simultaneous else "each group"
        return (f"Per-group thresholds accept {self.accepted:,} items unseen against {self.accepted_pooled:,} "
                f"with one pooled threshold ({self.gain:+,}); guarantee for {how} at "
                f"{short_pct(self.pooled.confidence)} confidence; {fb} of {len(self.groups)} groups "
                "send every item to a person (too small or nothing certified on their own items).")

    def to_dict(self) -> dict[str, Any]:
        return {
            "per_group": [g.to_dict() for g in self.groups],
            "per_group_gain": {"accepted": self.accepted, "accepted_pooled": self.accepted_pooled,
                               "gain": self.gain, "simultaneous": self.simultaneous,
                               "confidence_each": self.confidence_each, "min_items": self.min_items,
                               "message": self.message},
        }


def per_group(
    data: Data, *, target: float = TARGET, confidence: float = CONFIDENCE, simultaneous: bool = False,
    min_group: int | None = None, calibration: CalibrationMap | None = None,
) -> PerGroup:
    """One threshold per group with the fallback rule of the module docstring.

    Parameters
    ----------
    data:
        A dataset, rows or a count table with a group field.
    target, confidence:
        As :func:`calib.decision.risk.recommend`.
    simultaneous:
        Certify each group at ``delta / G`` (Bonferroni) for a guarantee over all groups.
    min_group:
        Fewest items a group needs to be certified on its own (default
        :func:`~calib.decision.risk.min_items` at the level used).
    calibration:
        A map fitted on other data: thresholds on its calibrated probability.
    """
    target, confidence = check_levels(target, confidence)
    table, _rows = table_and_rows(data)
    names = table.groups
    if len(names) < 2 and not names[0]:
        raise CalibError("per-group thresholds need a group field (subject, task, source); the data has none")
    pooled = recommend(table, target=target, confidence=confidence, calibration=calibration)
    each = 1 - (1 - confidence) / len(names) if simultaneous else confidence
    floor = min_items(target, each) if min_group is None else int(min_group)
    out = []
    accepted_pooled = 0
    for gi, name in enumerate(names):
        sub = table.select(gi)
        acc_p, err_p, up_p = bound_at(sub, pooled.threshold, each, calibration)
        accepted_pooled += acc_p
        if sub.total < floor:
            reason = f"{sub.total:,} items, fewer than {floor:,}"
        else:
            r = recommend(sub, target=target, confidence=each, calibration=calibration)
            if r.holds:
                out.append(GroupThreshold(name, r.threshold, sub.total, r.accepted,
                                          round((r.error_rate or 0) * r.accepted), r.error_upper, False, ""))
                continue
            reason = "its items certify no threshold"
        # never the pooled threshold: its guarantee is over all groups, not this one (issue 22)
        out.append(GroupThreshold(name, None, sub.total, 0, 0, None, True, reason, up_p))
    return PerGroup(tuple(out), pooled, accepted_pooled, each, bool(simultaneous), floor)
