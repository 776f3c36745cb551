"""The routing figures at a threshold, laid out once for every face.

A :class:`~calib.routing.Routing` holds the counts and rates at a review threshold with
their bootstrap intervals; :func:`routing_rows` turns it into labelled rows, one label
per figure (:data:`LABELS`) and one order, which the dashboard's metrics, the Routing
page's numbers table, the CLI's routing text and both HTML reports write out, each in
its own form. A row's ``text`` and ``interval`` are written by :mod:`calib.present.format`.

>>> from calib.routing import basis, route
>>> from calib.table import from_counts
>>> r = route(basis(from_counts([60, 90], n=[4, 6], correct=[1, 5])), 90)
>>> [(row.label, row.text) for row in routing_rows(r, ("to_person", "accepted", "errors_slipping"))]
[('Sent to a person', '4'), ('Accepted unseen', '6'), ('Errors slipping through', '1')]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calib.present import format as fmt

if TYPE_CHECKING:
    from calib.routing import Routing

#: The figure of each :class:`~calib.routing.Routing` field, as every face labels it.
LABELS: dict[str, str] = {
    "to_person": "Sent to a person",
    "middle": "Middle band",
    "accepted": "Accepted unseen",
    "accuracy_accepted": "Accuracy among accepted",
    "errors_slipping": "Errors slipping through",
    "errors_caught": "Errors caught",
    "reviewed_needlessly": "Right answers reviewed",
    "coverage": "Share accepted unseen",
    "risk": "Error rate among accepted",
    "cost_total": "Total cost",
}
#: Figures that are shares (written as percentages) and money; the rest are counts.
SHARES = frozenset({"accuracy_accepted", "coverage", "risk"})
MONEY = frozenset({"cost_total"})
#: The figures every face shows, in this order (the middle band with an upper
#: threshold, the total cost with costs; :func:`routing_rows` leaves out the others).
MAIN: tuple[str, ...] = ("to_person", "middle", "accepted", "accuracy_accepted", "errors_slipping",
                         "errors_caught", "cost_total")


@dataclass(frozen=True)
class RoutingRow:
    """One figure of a routing: ``key`` (the Routing field), ``label``, ``value``, its
    interval ``lo``/``hi`` (``None`` without one), ``text`` (the value written) and
    ``writer`` (how the value and the interval's ends are written)."""

    key: str
    label: str
    value: float | int | None
    lo: float | None
    hi: float | None
    text: str
    writer: Callable[[float | None], str]

    def interval(self) -> str:
        """``[lo, hi]`` written like the value; empty without an interval."""
        return fmt.interval(self.lo, self.hi, self.writer)

    def level_interval(self, level: float) -> str:
        """``95% [lo, hi]``, as headline metrics show it; empty without an interval."""
        return fmt.level_interval(level, self.lo, self.hi, self.writer)


def writer(key: str) -> Callable[[float | None], str]:
    """How the figure ``key`` is written: a percentage, money or a count."""
    return fmt.pct if key in SHARES else fmt.money if key in MONEY else fmt.count


def routing_rows(r: Routing, keys: Sequence[str] = MAIN) -> tuple[RoutingRow, ...]:
    """The rows of ``keys`` for ``r``, in the order given; the middle band only with an
    upper threshold, the total cost only with costs."""
    out = []
    for key in keys:
        if (key == "middle" and r.upper is None) or (key == "cost_total" and r.cost_total is None):
            continue
        value = getattr(r, key)
        iv = r.estimates.get(key)
        w = writer(key)
        out.append(RoutingRow(key, LABELS[key], value, None if iv is None else iv.lo,
                              None if iv is None else iv.hi, w(value), w))
    return tuple(out)
