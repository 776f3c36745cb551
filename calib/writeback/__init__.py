"""Write the decision back: one record per item with its probability and route.

``calib route FILE [--map M] --threshold T --decisions OUT.jsonl`` (issue 26, item 4)
writes, for every kept row of FILE:

- ``id``: the item id (the line number as text when the file has no id field), ``line``;
- ``stated``: the stated value as written on the scale (a phrase on a scale of phrases,
  :mod:`calib.verbal`; else the number);
- ``probability``: the calibrated probability of the map (``--map``), else the stated
  probability (``map`` is then null: no calibration was applied);
- ``route``: ``"person"`` (score below the threshold: a person reviews it) or
  ``"accepted"`` (at or above it: accepted unseen), the score being the calibrated
  probability with a map, else the stated value, as :func:`calib.routing.route` counts it;
- ``threshold``, ``on`` (``"stated"`` or ``"calibrated"``), ``map`` (its method) and the
  ``certificate`` the threshold came from (:class:`Certificate`).

As JSONL (:func:`to_jsonl`), CSV (:func:`to_csv`, spreadsheet-safe) or a platform's own
import form (:mod:`calib.writeback.platforms`: Langfuse's, Phoenix's, MLflow's and
OpenTelemetry's).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.labels.records import csv_cell
from calib.maps import CalibrationMap
from calib.numbers import finite_or_none
from calib.rows import Judgments
from calib.scale import snap

#: The routes written.
PERSON, ACCEPTED = "person", "accepted"
#: Output forms of ``--decisions-format``.
FORMATS = ("jsonl", "csv", "langfuse", "phoenix", "mlflow", "otel")


@dataclass(frozen=True)
class Certificate:
    """Where the threshold came from, and whether the recommendation certifies it.

    Attributes
    ----------
    routed_at:
        ``"recommendation"`` (the recommended threshold), ``"point_estimate"`` or
        ``"threshold"`` (given with ``--threshold``).
    method, procedure, target, confidence:
        The recommendation's test (fixed-sequence Clopper-Pearson, Learn-then-Test):
        at most ``target`` wrong among the accepted items with probability ``confidence``.
    recommended:
        The recommended threshold (``None`` when none qualifies).
    certified:
        The routed threshold *is* the recommended one and the recommendation holds: the
        guarantee covers exactly these routes. Any other threshold is not certified by it
        (the test was run for the recommended one; a threshold the user picks after
        seeing the data is not covered).
    error_rate, error_upper:
        The observed error rate among the recommendation's accepted items and its one-sided
        Clopper-Pearson upper bound at ``confidence``.
    """

    routed_at: str
    method: str
    procedure: str
    target: float
    confidence: float
    recommended: float | None
    certified: bool
    error_rate: float | None
    error_upper: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"routed_at": self.routed_at, "method": self.method, "procedure": self.procedure,
                "target": self.target, "confidence": self.confidence,
                "recommended": finite_or_none(self.recommended), "certified": self.certified,
                "error_rate": finite_or_none(self.error_rate), "error_upper": finite_or_none(self.error_upper)}


def certificate_of(rec: Any, threshold: float, routed_at: str) -> Certificate:
    """The :class:`Certificate` of a recommendation (:class:`calib.decision.Recommendation`)
    for routing at ``threshold``."""
    recommended = rec.threshold if rec.holds else None
    return Certificate(routed_at, rec.method, rec.procedure, float(rec.target), float(rec.confidence),
                       recommended, bool(rec.holds and recommended is not None and threshold == recommended),
                       rec.error_rate, rec.error_upper)


@dataclass(frozen=True)
class Decisions:
    """The decision for every item (see the module docstring); arrays in row order."""

    name: str
    ids: tuple[str, ...]
    line: np.ndarray
    stated: tuple[str | float, ...]
    probability: np.ndarray
    accepted: np.ndarray
    threshold: float
    on: str
    map: str | None
    certificate: Certificate

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready object per item."""
        cert = self.certificate.to_dict()
        return [
            {"id": i, "line": int(ln), "stated": s, "probability": float(p), "route": ACCEPTED if a else PERSON,
             "threshold": self.threshold, "on": self.on, "map": self.map, "certificate": cert}
            for i, ln, s, p, a in zip(self.ids, self.line, self.stated, self.probability, self.accepted, strict=True)
        ]

    @property
    def counts(self) -> dict[str, int]:
        k = int(np.count_nonzero(self.accepted))
        return {PERSON: int(self.accepted.size) - k, ACCEPTED: k}


def decisions(rows: Judgments, threshold: float, certificate: Certificate, *,
              calibration: CalibrationMap | None = None, name: str = "") -> Decisions:
    """Every row's probability and route at ``threshold`` (on the calibrated probability
    with ``calibration``, else on the stated value, compared after
    :func:`calib.scale.snap` as the count table counts it, as
    :func:`calib.routing.review_queue` does)."""
    if not np.isfinite(threshold):
        raise CalibError(f"the threshold must be a finite number, got {threshold!r}")
    if calibration is not None:
        prob = np.asarray(calibration.apply_rows(rows).prob, dtype=np.float64)
        score = prob
    else:
        prob = np.asarray(rows.prob, dtype=np.float64)
        score = snap(rows.stated, rows.scale)
    line = np.asarray(rows.line, dtype=np.int64)
    raw_ids = [str(x) for x in np.asarray(rows.item_id, dtype=object)] if len(rows.item_id) else [""] * line.size
    ids = tuple(i if i else str(int(ln)) for i, ln in zip(raw_ids, line, strict=True))
    sc = rows.scale
    stated = tuple(sc.show(v) if sc.labels else float(v) for v in np.asarray(rows.stated, dtype=np.float64))
    return Decisions(name, ids, line, stated, prob, score >= threshold, float(threshold),
                     "calibrated" if calibration is not None else "stated",
                     calibration.method if calibration is not None else None, certificate)


def to_jsonl(d: Decisions) -> bytes:
    """One JSON object per item per line, UTF-8 (``ensure_ascii=False``; JSON escapes newlines)."""
    return "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in d.records()).encode("utf-8")


#: The CSV's columns: the record's, the certificate flattened as ``certificate_<key>``.
CSV_COLUMNS = ("id", "line", "stated", "probability", "route", "threshold", "on", "map") + tuple(
    f"certificate_{k}" for k in ("routed_at", "method", "procedure", "target", "confidence", "recommended",
                                 "certified", "error_rate", "error_upper"))


def to_csv(d: Decisions) -> bytes:
    """A header (:data:`CSV_COLUMNS`) and one row per item, UTF-8, safe in a spreadsheet:
    every text cell through :func:`calib.labels.records.csv_cell` (an apostrophe before a
    formula-like id or phrase) and quoted, as the review queue and the labels export are;
    booleans written ``true``/``false``, a missing number empty."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in d.records():
        flat = {**{k: v for k, v in r.items() if k != "certificate"},
                **{f"certificate_{k}": v for k, v in r["certificate"].items()}}
        w.writerow([_cell(flat[c]) for c in CSV_COLUMNS])
    return buf.getvalue().encode("utf-8")


def _cell(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    if isinstance(v, str):
        return csv_cell(v)
    return v


def write_bytes(d: Decisions, fmt: str, *, now: str) -> bytes:
    """``d`` in one of :data:`FORMATS`; ``now`` (ISO 8601, UTC) stamps the platform forms."""
    if fmt == "jsonl":
        return to_jsonl(d)
    if fmt == "csv":
        return to_csv(d)
    from calib.writeback import platforms

    return platforms.write(d, fmt, now=now)
