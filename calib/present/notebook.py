"""The notebook face: what ``import calib`` exposes, results that render in Jupyter.

``calib.audit``, ``calib.fit``, ``calib.route`` (= ``calib.decide``), ``calib.compare``
and ``calib.load`` are the functions here (see :mod:`calib` for how the names are
reached). Inputs are read by :mod:`calib.api` exactly as files are; this module only
wraps what the engine returns:

- :class:`AuditResult` (what :func:`audit` returns): the engine's
  :class:`~calib.audit.Audit` (``.audit``; every attribute of it is reachable on the
  result too: ``.ece``, ``.estimates`` (each figure an :class:`calib.estimates.Estimate`),
  ``.metrics``, ``.ci``, ``.tests``...) with its dataset
  (``.dataset``); ``.verdict`` reads as text; ``.to_frame()`` (the headline figures
  with their intervals), ``.per_value`` and ``.bins`` as pandas DataFrames (on the
  engine's Audit, ``per_value`` is the tuple of rows and ``bins`` the number of bins);
  ``.figure()`` the static reliability diagram (:mod:`calib.present.static`);
  ``.to_dict()`` the ``calib audit --json`` object, unchanged; ``_repr_html_`` the
  verdict, the headline figures with their intervals and n, and the diagram as inline
  SVG. Every user text (dataset name, group names) is escaped
  (:func:`calib.present.format.esc`).
- :class:`DecisionResult` (what :func:`route`/:func:`decide` return): the engine's
  :class:`~calib.decision.decide.Decision` (``.decision``, its attributes reachable on
  the result); ``str()`` is the recommendation's sentence; ``.cost_frame()`` and
  ``.groups_frame()`` the cost curve and the per-group thresholds as DataFrames;
  ``_repr_html_`` the recommendation with its bound, the cheapest threshold with its
  intervals, the AURC with its interval, the per-group table; ``.to_dict()`` the
  ``calib route --json`` object.
- :class:`FitView` (what :func:`fit` returns) and :class:`CompareView` (what
  :func:`compare` returns): the engine's :class:`~calib.maps.fitting.FitResult`
  (``.result``) and :class:`~calib.compare.Comparison` (``.comparison``), their
  attributes reachable on the view; a one-line ``repr`` (not the dataclass's kilobytes),
  ``_repr_html_`` a small card (every model name escaped) and ``.to_dict()`` the CLI's
  JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calib import api
from calib.present.decision import CERTIFIED_LABEL, threshold_interval
from calib.present.format import esc
from calib.settings import DEFAULT_CONFIDENCE, DEFAULT_TARGET

if TYPE_CHECKING:  # types for annotations only (the structure check allows them here)
    from calib.audit import Audit, Verdict
    from calib.compare import Comparison
    from calib.dataset import Dataset
    from calib.decision.decide import Decision
    from calib.estimates import Estimate
    from calib.maps.fitting import FitResult
    from calib.present.static import StaticFigure

load = api.load


def fit(data: Any = None, method: str = "platt", **kwargs: Any) -> FitView:
    """Fit and score a recalibration map (:func:`calib.api.fit`), wrapped for display."""
    return FitView(api.fit(data, method, **kwargs))


def compare(data: Any, **kwargs: Any) -> CompareView:
    """Several models side by side (:func:`calib.api.compare`), wrapped for display."""
    return CompareView(api.compare(data, **kwargs))


def audit(data: Any = None, **kwargs: Any) -> AuditResult:
    """Audit a path, a DataFrame, an Arrow table, a mapping of columns or arrays.

    ``calib.audit(df, confidence="conf", outcome="correct", group="subject",
    cluster="item")``; the field arguments are :func:`calib.api.load`'s, the others
    :func:`calib.audit.audit`'s (``scheme``, ``bins``, ``reps``, ``seed``, ``level``,
    ``below``).

    Examples
    --------
    Four answers stated at 90 (three right) and four at 60 (two right): accuracy 5/8,
    mean confidence 0.75; the Brier score is (3 x 0.1² + 0.9² + 2 x 0.4² + 2 x 0.6²) / 8
    = 0.235 and the ECE 0.5 x 0.15 + 0.5 x 0.1 = 0.125:

    >>> import calib
    >>> a = calib.audit({"confidence": [90, 90, 90, 90, 60, 60, 60, 60],
    ...                  "correct": [1, 1, 1, 0, 1, 0, 1, 0]}, reps=200, seed=0)
    >>> a
    <calib audit of 'data': 8 answers, ECE 0.125>
    >>> round(a.metrics["accuracy"], 6), round(a.metrics["brier"], 6)
    (0.625, 0.235)
    >>> a.to_dict()["scale"]["name"]
    '0-100'
    """
    a, ds = api.audit(data, **kwargs)
    return AuditResult(a, ds)


@dataclass(frozen=True)
class AuditResult:
    """An audit and the data it was run on, for a notebook (see the module docstring)."""

    audit: Audit
    dataset: Dataset

    def __getattr__(self, name: str) -> Any:
        # everything else is the engine's Audit (dataclass fields are found before this)
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.audit, name)

    @property
    def verdict(self) -> Verdict:
        return self.audit.verdict

    @property
    def per_value(self) -> Any:
        """One row per stated value: n, hit rate with its Wilson interval, gap, test."""
        return self.audit.per_value_frame()

    @property
    def bins(self) -> Any:
        """One row per bin of the ECE's scheme."""
        return self.audit.bins_frame()

    def to_frame(self) -> Any:
        return self.audit.to_frame()

    def to_dict(self) -> dict[str, Any]:
        return self.audit.to_dict()

    def figure(self) -> StaticFigure:
        """The reliability diagram, static (``.save("d.svg")``, ``.save("d.png")``)."""
        from calib.present.static import reliability_diagram

        return reliability_diagram(self.audit, self.dataset.table, name=self.dataset.name)

    def __str__(self) -> str:
        return str(self.audit.verdict)

    def __repr__(self) -> str:
        a = self.audit
        return f"<calib audit of {a.name!r}: {a.n:,} answers, ECE {_num(a.ece)}>"

    def _repr_html_(self) -> str:
        return audit_html(self.audit, self.figure().to_svg())


def _num(x: float | None, digits: int = 3) -> str:
    return "undefined" if x is None else f"{x:.{digits}f}"


def _threshold(x: float | None) -> str:
    return "none (all to a person)" if x is None else f"{x:g}"


def _interval(lo: float | None, hi: float | None, digits: int = 3) -> str:
    return "" if lo is None or hi is None else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def audit_html(a: Audit, svg: str | None = None) -> str:
    """The notebook card of an audit: name, verdict, headline figures with their
    intervals and n, the diagram (inline SVG drawn by :mod:`calib.present.static`)."""
    level = f"{100 * a.level:g}%"
    rows = []
    for key, _what in _headline():
        e = a.estimates[key]
        rows.append(f"<tr><td>{esc(key)}</td><td>{_num(e.value)}</td><td>{_interval(e.lo, e.hi)}</td></tr>")
    verdict = "".join(f"<li>{esc(s)}</li>" for s in a.verdict)
    groups = ""
    if a.groups:
        groups = "<p>Per group: " + ", ".join(
            f"{esc(g.group or '')} (n = {g.n:,}, ECE {_num(g.ece)})" for g in a.groups) + "</p>"
    return (
        f"<div class='calib-audit'><h4>Calibration audit: {esc(a.name or '(unnamed)')}</h4>"
        f"<p>{a.n:,} answers, {a.correct:,} right; intervals at {level}, {a.reps:,} resamples.</p>"
        f"<ul>{verdict}</ul>"
        f"<table><thead><tr><th>figure</th><th>estimate</th><th>{level} interval</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>{groups}"
        + (f"<div>{svg}</div>" if svg else "") + "</div>"
    )


def _headline() -> tuple[tuple[str, str], ...]:
    from calib.runs.audit import HEADLINE

    return HEADLINE



def route(data: Any = None, **kwargs: Any) -> DecisionResult:
    """Where to put the review threshold: :func:`calib.api.route` (target, the
    guarantee's ``confidence_level``, costs, capacity, per group), wrapped for display.

    Examples
    --------
    Forty answers at 95, all right, and twenty at 70, half right. Accepting 95 and
    above, 0 of 40 are wrong; the one-sided 95% Clopper-Pearson bound for 0 of 40 is
    1 - 0.05^(1/40) = 0.0722, under a 10% target but not under 5%:

    >>> import calib
    >>> data = {"confidence": [95] * 40 + [70] * 20, "correct": [1] * 50 + [0] * 10}
    >>> r = calib.route(data, target=0.10).to_dict()["recommendation"]
    >>> r["threshold"], r["accepted"], r["to_person"], round(r["error_upper"], 4)
    (95.0, 40, 20, 0.0722)
    >>> print(calib.route(data, target=0.05))
    No threshold can be certified at or under 5% of the items accepted unseen ...
    """
    return DecisionResult(api.route(data, **kwargs))


#: :func:`route` under the engine's name.
decide = route

#: Per-group rows shown in the notebook card (the DataFrame has them all).
GROUP_ROWS = 20


@dataclass(frozen=True)
class DecisionResult:
    """A threshold decision, for a notebook (see the module docstring)."""

    decision: Decision

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.decision, name)

    def to_dict(self) -> dict[str, Any]:
        return self.decision.to_dict()

    def cost_frame(self) -> Any:
        """The expected cost per item at every threshold, with its interval."""
        import pandas as pd

        rows = [{"threshold": r["threshold"], "cost": r["cost"], "lo": r["cost_ci"][0], "hi": r["cost_ci"][1]}
                for r in self.to_dict()["cost_curve"]]
        return pd.DataFrame(rows, columns=["threshold", "cost", "lo", "hi"])

    def groups_frame(self) -> Any:
        """One row per group: its threshold, items accepted, the bound, the fallback."""
        import pandas as pd

        cols = ["group", "threshold", "accepted", "error_upper", "pooled_fallback", "total", "errors", "reason"]
        return pd.DataFrame(self.to_dict()["per_group"], columns=cols)

    def __str__(self) -> str:
        return str(self.to_dict()["recommendation"]["message"])

    def _repr_html_(self) -> str:
        return decision_html(self.to_dict())


def decision_html(d: dict[str, Any]) -> str:
    """The notebook card of a decision (every number beside its interval or n)."""
    r = d["recommendation"]
    conf = f"{100 * r['confidence']:g}%"
    total = r["accepted"] + r["to_person"]
    upper = "" if r["error_upper"] is None else f", at most {100 * r['error_upper']:.1f}% with {conf} confidence"
    err = "" if r["error_rate"] is None else f"<li>error among accepted: {100 * r['error_rate']:.1f}%{upper}</li>"
    parts = [
        "<div class='calib-decision'><h4>Review threshold</h4>", f"<p>{esc(r['message'])}</p>",
        f"<ul><li>target {100 * r['target']:g}% at {conf} confidence; method: {esc(r['method'])}; "
        f"certified on {esc(r['certified_on'])}</li>",
        f"<li>accepted unseen {r['accepted']:,} of {total:,}, to a person {r['to_person']:,}</li>{err}",
    ]
    ch = d.get("cheapest")
    if ch:
        at = "review everything" if ch["threshold"] is None else f"accept at or above {ch['threshold']:g}"
        t_ci = threshold_interval(ch["threshold_ci"], ch["cost_ci_method"] is not None)
        tci = f" (threshold {esc(t_ci)})" if t_ci else ""
        parts.append(f"<li>cheapest: {at}{tci}, cost per item {_num(ch['cost'])} "
                     f"{_interval(*ch['cost_ci'])}</li>")
    if d.get("aurc") is not None:
        parts.append(f"<li>AURC {_num(d['aurc'])} {_interval(*d['aurc_ci'])}, excess over the oracle "
                     f"{_num(d['eaurc'])} {_interval(*d['eaurc_ci'])}</li>")
    parts.append("</ul>")
    groups = d.get("per_group") or []
    if groups:
        gain = d.get("per_group_gain") or {}
        rows = "".join(
            f"<tr><td>{esc(g['group'])}</td><td>{_threshold(g['threshold'])}</td>"
            f"<td>{g['accepted']:,} of {g['total']:,}</td><td>{_num(g['error_upper'])}</td>"
            f"<td>{'no' if g['pooled_fallback'] else 'yes'}</td></tr>" for g in groups[:GROUP_ROWS])
        more = f"<p>{len(groups) - GROUP_ROWS:,} more groups in .groups_frame()</p>" if len(groups) > GROUP_ROWS else ""
        parts.append(f"<p>{esc(gain.get('message', ''))}</p><table><thead><tr><th>group</th><th>threshold</th>"
                     f"<th>accepted</th><th>error upper bound</th><th>{CERTIFIED_LABEL}</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>{more}")
    return "".join(parts) + "</div>"


def _est(e: Estimate, signed: bool = False) -> str:
    """``0.219 [0.210, 0.230]`` (NaN ends: no interval)."""
    import math

    v = "undefined" if math.isnan(e.value) else (f"{e.value:+.3f}" if signed else f"{e.value:.3f}")
    ends = (None if math.isnan(x) else x for x in (e.lo, e.hi))
    return f"{v} {_interval(*ends)}".rstrip()


class _View:
    """The engine's result (first field) with its attributes reachable on the view."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(getattr(self, self._inner), name)

    _inner = ""

    def to_dict(self) -> dict[str, Any]:
        return getattr(self, self._inner).to_dict()


@dataclass(frozen=True, repr=False)
class FitView(_View):
    """A fitted map and its scores, for a notebook (see the module docstring)."""

    result: FitResult
    _inner = "result"

    def __repr__(self) -> str:
        r = self.result
        return (f"<calib fit: {r.method} map, scored {r.scoring} on {r.n_eval:,} rows; Brier "
                f"{_est(r.before.brier)} -> {_est(r.after.brier)}, ECE {_est(r.before.ece)} -> {_est(r.after.ece)}"
                + (" (useless: the base rate is returned)" if r.useless else "") + ">")

    def _repr_html_(self) -> str:
        from calib.present.meanings import FIT_ECE_INTERVAL_TEXT
        from calib.present.tables import map_formula

        r = self.result
        level = f"{100 * r.level:g}%"
        rows = "".join(
            f"<tr><td>{label}</td>" + "".join(f"<td>{esc(_est(getattr(side, key), side is r.change))}</td>"
                                            for side in (r.before, r.after, r.base_rate, r.change)) + "</tr>"
            for key, label in (("brier", "Brier score"), ("log_loss", "Log loss"), ("ece", "ECE")))
        useless = f"<p>The map is useless: {esc(r.reason)}; the base rate is returned.</p>" if r.useless else ""
        return (
            f"<div class='calib-fit'><h4>Recalibration map: {esc(r.method)}</h4>"
            f"<p>{r.n_fit:,} rows fitted, {r.n_eval:,} scored ({esc(r.scoring)}); {level} intervals, "
            f"{r.reps:,} resamples; lower is better.</p>{useless}"
            "<table><thead><tr><th></th><th>stated</th><th>after the map</th><th>base rate</th>"
            f"<th>change</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p>{esc(FIT_ECE_INTERVAL_TEXT) if r.reps else ''}</p>"
            f"<p>The map: {esc(map_formula(r.map))}</p></div>"
        )


@dataclass(frozen=True, repr=False)
class CompareView(_View):
    """Several models side by side, for a notebook (see the module docstring)."""

    comparison: Comparison
    _inner = "comparison"

    def __repr__(self) -> str:
        rows = self.comparison.rows
        ece = "; ".join(f"{r.model!r} ECE {_num(r.ece.value)}" for r in rows[:5])
        more = f"; {len(rows) - 5:,} more" if len(rows) > 5 else ""
        return f"<calib comparison of {len(rows):,} models: {ece}{more}>"

    def _repr_html_(self) -> str:
        c = self.comparison
        rows = "".join(
            f"<tr><td>{esc(r.model)}</td><td>{r.n:,}</td><td>{_num(r.accuracy)}</td>"
            f"<td>{_num(r.ece.value)} {_interval(*r.ece.ci)}</td><td>{_num(r.brier.value)} {_interval(*r.brier.ci)}</td>"
            f"<td>{_num(r.brier_constant.value)} {_interval(*r.brier_constant.ci)}</td>"
            f"<td>{esc(r.brier_winner or 'undefined')}</td></tr>" for r in c.rows)
        return (
            f"<div class='calib-compare'><h4>Comparison of {len(c.rows):,} models</h4>"
            f"<p>{100 * c.level:g}% intervals, {c.reps:,} resamples.</p>"
            "<table><thead><tr><th>model</th><th>n</th><th>accuracy</th><th>ECE</th><th>Brier</th>"
            "<th>Brier, constant</th><th>Brier winner (paired test)</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>"
        )


# ------------------------------------------------------------------ traffic (calib.plan, estimate, certify)
def plan(traffic: Any, labels: Any = None, *, budget: int, target_error: float | None = None,
         seed: int | None = None) -> dict[str, Any]:
    """``calib plan --json`` as a dict: the next ``budget`` items of ``traffic`` to label
    (:mod:`calib.traffic.plan`). ``traffic`` is a path or bytes of any input ``calib audit``
    reads, outcomes not needed, a DataFrame or a :class:`~calib.traffic.read.Traffic`
    (:func:`calib.api.load_traffic`)."""
    from calib.api import load_traffic
    from calib.runs.settings import Settings
    from calib.runs.traffic import as_labelled
    from calib.runs.traffic import plan as plan_

    tr = load_traffic(traffic)
    lab = None if labels is None else as_labelled(tr, labels)
    return plan_(tr, lab, budget, Settings(target=target_error, seed=seed)).to_dict()


def estimate(traffic: Any, labels: Any, *, threshold: float | None = None) -> dict[str, Any]:
    """``calib estimate --json`` as a dict (:mod:`calib.traffic.estimate`)."""
    from calib.api import load_traffic
    from calib.runs.settings import Settings
    from calib.runs.traffic import as_labelled
    from calib.runs.traffic import estimate as estimate_

    tr = load_traffic(traffic)
    return estimate_(as_labelled(tr, labels), Settings(), threshold=threshold)


def certify(traffic: Any, labels: Any, *, target_error: float = DEFAULT_TARGET,
            confidence: float = DEFAULT_CONFIDENCE) -> dict[str, Any]:
    """``calib certify --json`` as a dict (:mod:`calib.traffic.certify`)."""
    from calib.api import load_traffic
    from calib.runs.settings import Settings
    from calib.runs.traffic import as_labelled
    from calib.runs.traffic import certify as certify_

    tr = load_traffic(traffic)
    return certify_(as_labelled(tr, labels), Settings(target=target_error, confidence=confidence)).to_dict()


def budget(traffic: Any, labels: Any = None, *, target_error: float = DEFAULT_TARGET,
           confidence: float = DEFAULT_CONFIDENCE, planned: int | None = None, trials: int | None = None,
           max_labels: int | None = None, seed: int | None = 0) -> dict[str, Any]:
    """``calib budget --json`` as a dict (:mod:`calib.traffic.budget`): before labelling, how many
    labels the plan needs to certify (simulated, median and 10-90% range, beside uniform
    sampling) and the drift and kappa ``planned`` labels can detect."""
    from calib.api import load_traffic
    from calib.runs.settings import Settings
    from calib.runs.traffic import as_labelled
    from calib.runs.traffic import budget as budget_

    tr = load_traffic(traffic)
    s = Settings(target=target_error, confidence=confidence, seed=seed)
    return budget_(tr if labels is None else as_labelled(tr, labels), s, planned=planned, trials=trials,
                   max_labels=max_labels)


# ------------------------------------------------------------------ reviewers' labels (calib.agreement)
def agreement(labels: Any, *, clusters: Any = None, reps: int = 2000, seed: int = 0, level: float = 0.95,
              dataset: str | None = None) -> dict[str, Any]:
    """``calib labels agreement --json`` as a dict: the agreement among the reviewers of
    ``labels`` (a path or the bytes of a labels file, or :class:`calib.labels.Label`
    records), ``clusters`` an optional item -> cluster mapping for the bootstrap
    (:func:`calib.labels.reviewers.reviewer_agreement`); bad lines of a file are in
    ``messages``."""
    from calib.runs.labels import read_reviewer_labels, reviewers
    from calib.runs.settings import Settings

    labs, messages = read_reviewer_labels(labels)
    s = Settings(reps=reps, seed=seed, level=level)
    return reviewers(labs, s, messages=messages, clusters=clusters, dataset=dataset).to_dict()
