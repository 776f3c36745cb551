"""Route stability (issue 28, item 3): an item judged several times (Inspect epochs, re-asks,
repeated ids) may be routed differently each time.

Contract
--------
:func:`stability` takes rows and a threshold on the stated scale and returns a
:class:`Stability`: among the items judged at least twice, how many are routed both ways
(some judgments at or above the threshold, "accepted unseen", some below, "to a person"),
the share with its Wilson (1927) interval, the item being the unit (items independent,
judgments of one item not); per item the standard deviation (``ddof = 1``) and range of its
stated values, summarised (median, 90th percentile, largest); and the threshold certificate
with the item as the unit: :func:`calib.decision.risk.recommend` on the rows clustered by
item, which certifies the error per item (the share of an item's accepted answers that are
wrong, averaged over the items with one accepted) on one accepted answer drawn per item
(:func:`calib.decision.risk.per_item`), so the judge's own re-sampling cannot inflate the
evidence as counting every judgment would.

The item is ``rows.cluster`` when the rows carry one (epochs, ``--cluster-key``), else the
item id (rows without an id are items of their own). The threshold is the one given, else
the certificate's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from calib.clusters import distinct_codes
from calib.decision.risk import CONFIDENCE, TARGET, Recommendation, recommend
from calib.estimates import NONE, WILSON, Estimate
from calib.metrics.values import wilson_interval
from calib.numbers import finite_or_none, plain
from calib.rows import Judgments
from calib.scale import snap
from calib.settings import LEVEL


@dataclass(frozen=True)
class Stability:
    """What :func:`stability` returns (see the module docstring). ``flip`` is the share of
    repeated items whose route flips, an :class:`~calib.estimates.Estimate` with its Wilson
    interval at ``level`` (items as the unit)."""

    threshold: float | None
    threshold_source: str
    items: int
    items_repeated: int
    judgments: int
    flipped: int
    flip: Estimate
    sd_median: float | None
    sd_p90: float | None
    range_max: float | None
    certificate: Recommendation | None
    level: float
    unit: str

    @property
    def flip_share(self) -> float | None:
        """:attr:`flip`'s value: flipped items over repeated ones (``None`` without either)."""
        return self.flip.value

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "threshold": self.threshold, "threshold_source": self.threshold_source, "unit": self.unit,
            "items": self.items, "items_repeated": self.items_repeated, "judgments": self.judgments,
            "flipped": self.flipped, "flip_share": self.flip_share, "flip_ci": self.flip.to_list(),
            "flip_interval": "Wilson, items as the unit", "level": self.level,
            "confidence_sd_median": self.sd_median, "confidence_sd_p90": self.sd_p90,
            "confidence_range_max": self.range_max,
            "certificate": None if self.certificate is None else self.certificate.to_dict(),
        })


def item_codes(rows: Judgments) -> tuple[np.ndarray, str]:
    """Each row's item number (0..items-1) and what an item is, in words."""
    if rows.cluster is not None:
        key, unit = np.asarray(rows.cluster).astype(str), rows.cluster_how or "the rows' clusters"
    else:
        ids = np.asarray(rows.item_id).astype(str)
        # a row without an id is an item of its own
        key = np.where(ids == "", np.char.add("\x00row", np.arange(ids.size).astype(str)), ids)
        unit = "item id"
    return distinct_codes(key), unit


def stability(rows: Judgments, threshold: float | None = None, *, target: float = TARGET,
              confidence: float = CONFIDENCE, level: float = LEVEL, seed: int = 0) -> Stability:
    """Route flips, confidence spread and the item-level certificate (module docstring)."""
    code, unit = item_codes(rows)
    items = int(code.max()) + 1 if code.size else 0
    clustered = rows if rows.cluster is not None else replace(rows, cluster=code.astype(str),
                                                              cluster_how="repeated item ids")
    cert = recommend(clustered, target=target, confidence=confidence, seed=seed) if len(rows) else None
    source = "given"
    if threshold is None:
        threshold = None if cert is None else cert.threshold
        source = "certified with the item as the unit" if threshold is not None else "none"
    stated = snap(rows.stated, rows.scale)
    size = np.bincount(code, minlength=items)
    rep = size >= 2
    flipped = 0
    if threshold is not None:
        acc = np.bincount(code, weights=stated >= threshold, minlength=items)
        flipped = int(np.count_nonzero(rep & (acc > 0) & (acc < size)))
    m = int(rep.sum())
    defined = bool(m) and threshold is not None
    lo, hi = wilson_interval(flipped, m, level) if defined else (None, None)
    flip = (Estimate(flipped / m, finite_or_none(lo), finite_or_none(hi), float(level), WILSON) if defined
            else Estimate(None, None, None, None, NONE))
    s1 = np.bincount(code, weights=stated, minlength=items)
    s2 = np.bincount(code, weights=stated * stated, minlength=items)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (s2 - s1 * s1 / size) / (size - 1)
    sd = np.sqrt(np.clip(var[rep], 0, None))
    hi_v = np.full(items, -np.inf)
    lo_v = np.full(items, np.inf)
    np.maximum.at(hi_v, code, stated)
    np.minimum.at(lo_v, code, stated)
    return Stability(
        finite_or_none(threshold), source, items, m, int(size[rep].sum()), flipped,
        flip, finite_or_none(np.median(sd)) if m else None,
        finite_or_none(np.quantile(sd, 0.9)) if m else None,
        finite_or_none((hi_v - lo_v)[rep].max()) if m else None, cert, float(level), unit)
