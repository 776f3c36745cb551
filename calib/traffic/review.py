"""What reviewers of traffic are shown: the labelling plan as review items, in the plan's order.

Contract
--------
- :func:`traffic_review` draws the plan once per (traffic, budget, seed, target):
  :func:`calib.traffic.plan.plan` with no earlier labels, so every reviewer of a link
  sees the same items in the same order, and the labelled items of a stratum are a
  simple random sample of it (the design :mod:`calib.traffic.estimate` and
  :mod:`calib.traffic.certify` assume). The plan lists its items in a random order
  interleaving the strata; reviewers meet them in that order.
- An item's kind is ``"queue"`` when its stated value is under the owner's threshold
  (it goes to a person anyway) and ``"audit"`` at or above it (accepted unseen): the kinds
  of :data:`calib.labels.records.KINDS`, so a label is checked as any other
  (:class:`calib.hosting.labels.ReviewCatalog`). Each item carries why it was chosen:
  its stratum, the stratum's size, the labels the plan gives it and its inclusion
  probability.
- :func:`review_threshold` is the owner's review threshold on the stated scale (clipped
  to it), else :data:`calib.settings.DEFAULT_LOWER_PROB` of the scale's top: the default
  of :func:`calib.hosting.labels.review_threshold` for a labelled file.
- :func:`item_texts` reads, for the planned items only, their line and their question
  and answer text (the first field of :data:`calib.readers.stated.rules.TEXT_KEYS` and of
  :data:`~calib.readers.stated.rules.PREDICTION_KEYS`, cut to
  :data:`~calib.readers.stated.rules.TEXT_CHARS`), user text never interpreted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.labels.plan import ReviewItem
from calib.readers.base import BadLines, LoadOptions
from calib.readers.jsonl import BOM
from calib.readers.stated.rules import ID_KEYS, PREDICTION_KEYS, TEXT_CHARS, TEXT_KEYS
from calib.settings import DEFAULT_LOWER_PROB
from calib.traffic.plan import Plan, plan
from calib.traffic.read import MAX_MESSAGES, Traffic, _pick, _records


@dataclass(frozen=True)
class Why:
    """Why a planned item is on the list: its stratum, the stratum's item count, the
    labels the plan gives the stratum and the item's inclusion probability."""

    stratum: str
    items: int
    planned: int
    inclusion_probability: float


@dataclass(frozen=True)
class TrafficReview:
    """The items reviewers of traffic label, in the plan's order (``items``), each with
    its :class:`Why` (``why``, same order). ``queue`` and ``audit`` are the same items
    split by kind (what a label is checked against)."""

    items: tuple[ReviewItem, ...]
    why: tuple[Why, ...]
    threshold: float
    budget: int
    seed: int
    target_error: float | None
    accepted: int
    plan: Plan

    @property
    def queue(self) -> tuple[ReviewItem, ...]:
        return tuple(it for it in self.items if it.kind == "queue")

    @property
    def audit(self) -> tuple[ReviewItem, ...]:
        return tuple(it for it in self.items if it.kind == "audit")

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "budget": self.budget, "seed": self.seed,
                "target_error": self.target_error, "accepted": self.accepted,
                "items": [{**it.to_dict(), "why": w.__dict__} for it, w in zip(self.items, self.why, strict=True)]}


def review_threshold(lo: float | None, top: float) -> float:
    """The owner's threshold ``lo`` (``None``: not set on the stated scale) on ``top``'s scale."""
    return DEFAULT_LOWER_PROB * top if lo is None else float(min(max(lo, 0.0), top))


def item_texts(data: bytes, name: str, keys: set[str], *, id_key: str | None = None,
               options: LoadOptions | None = None) -> dict[str, tuple[int, str]]:
    """``key -> (line, text)`` of the items ``keys`` of a traffic file (see the contract)."""
    objs = _records(data.removeprefix(BOM), name, options or LoadOptions(), BadLines(name, MAX_MESSAGES))
    ikey = _pick(objs, id_key, ID_KEYS)
    tkey = _pick(objs, None, TEXT_KEYS)
    pkey = _pick(objs, None, PREDICTION_KEYS)
    out: dict[str, tuple[int, str]] = {}
    for no, obj in objs:
        key = f"line {no}" if ikey is None else str(obj.get(ikey))
        if key not in keys or key in out:
            continue
        parts = [f"{k}: {_cut(obj.get(k))}" for k in (tkey, pkey) if k and isinstance(obj.get(k), str)]
        out[key] = (no, "\n".join(parts))
    return out


def _cut(v: str) -> str:
    return v if len(v) <= TEXT_CHARS else v[: TEXT_CHARS - 1] + "…"


def traffic_review(traffic: Traffic, threshold: float, budget: int, *, seed: int = 0,
                   target_error: float | None = None, data: bytes | None = None) -> TrafficReview:
    """The review items of ``traffic`` (see the module's contract); ``data``, the file's bytes,
    gives the items their line and text (:func:`item_texts`)."""
    p = plan(traffic, None, budget, target_error=target_error, seed=seed)
    index = {k: i for i, k in enumerate(traffic.keys)}
    sizes = {row["stratum"]: (row["items"], row["planned"]) for row in p.strata_rows}
    texts = {} if data is None else item_texts(data, traffic.name, set(p.ids))
    items, why = [], []
    for key, stratum, pi in zip(p.ids, p.stratum, p.inclusion, strict=True):
        i = index[key]
        stated = float(traffic.stated[i])
        line, text = texts.get(key, (int(key[5:]) if key.startswith("line ") and key[5:].isdigit() else 0, ""))
        kind = "queue" if stated < threshold else "audit"
        items.append(ReviewItem(key, line, kind, "", stated, stated / traffic.top, False, text))
        why.append(Why(stratum, int(sizes[stratum][0]), int(sizes[stratum][1]), float(pi)))
    accepted = int(np.count_nonzero(traffic.stated >= threshold))
    return TrafficReview(tuple(items), tuple(why), float(threshold), budget, seed, target_error, accepted, p)
