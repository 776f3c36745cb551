"""The engine's results for the pages, cached by content and settings.

Each ``*_for`` function calls the same engine function the CLI calls (``calib audit``,
``calib compare``, ``calib recalibrate``...), with the view's settings, inside a
heavy-work slot (:func:`dashboard.runtime.heavy`), and caches the result by the
dataset's content key (:func:`dashboard.entries.cache_key`), never by the dataset
object: renaming a model does not recompute anything. The engine modules are imported
on first use: the Data page's first paint does not wait for them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from dashboard.context import Context
from dashboard.entries import cache_key
from dashboard.runtime import heavy

if TYPE_CHECKING:  # the engine's types, without importing it on the cold start's path
    from calib.audit import Audit
    from calib.compare import Comparison
    from calib.curves import BinnedPoints, IsotonicCurve, ValuePoints
    from calib.decision import Decision, JudgeComparison
    from calib.loadreport import LoadReport
    from calib.maps import CalibrationMap, FitResult
    from calib.routing import Basis
    from calib.table import CountTable

    Curve = ValuePoints | BinnedPoints | IsotonicCurve


def ece_scheme(v: views.View) -> str:
    """The binning scheme of every ECE figure (the CORP view reads its ECE per value / auto)."""
    return v.scheme if v.scheme in ("auto", "values", "width", "mass") else "auto"


@st.cache_data(max_entries=64, show_spinner="Computing the reliability curve…")
def _curve_cached(key: str, kind: str, bins: int, level: float, reps: int, seed: int,
                  _table: CountTable) -> Curve:
    from calib import curves

    with heavy("the reliability curve's bootstrap"):
        return curves.reliability(_table, kind, bins=bins, level=level, reps=reps, seed=seed)


def curve_for(ds: Dataset, v: views.View, table: CountTable | None = None, *, key_extra: str = "") -> Curve:
    """The reliability curve of the view's scheme for a dataset (cached by content)."""
    from calib import metrics

    t = ds.table if table is None else table
    kind = v.scheme if v.scheme != "auto" else metrics.resolve_scheme(t, "auto")
    return _curve_cached(cache_key(ds) + key_extra, kind, v.bins, v.level, v.reps, v.seed, t)


@st.cache_data(max_entries=64, show_spinner="Fitting and scoring the map…")
def _fit_cached(key: str, eval_key: str, method: str, scoring: str, folds: int, seed: int, reps: int,
                level: float, scheme: str, bins: int, _data: Dataset, _eval: Dataset | None) -> FitResult:
    from calib import maps

    with heavy("fitting the map"):
        return maps.fit(_data, method, scoring=scoring, eval_data=_eval, folds=folds, seed=seed, reps=reps,
                        level=level, ece_scheme=scheme, ece_bins=bins)


def fit_for(ctx: Context, ds: Dataset, *, method: str | None = None, scoring: str | None = None) -> FitResult | None:
    """The view's recalibration fit for ``ds`` (``None`` for method "none" or a missing
    second file); ``method`` and ``scoring`` replace the view's. Raises
    :class:`CalibError` for data the method cannot use."""
    v = ctx.view
    method = v.method if method is None else method
    scoring = v.scoring if scoring is None else scoring
    if method == "none":
        return None
    ev = None
    if scoring == "file":
        ev = ctx.by_name(v.eval_model)
        if ev is None or ev.name == ds.name:
            return None
    return _fit_cached(cache_key(ds), "" if ev is None else cache_key(ev), method, scoring, v.folds, v.seed,
                       v.reps, v.level, ece_scheme(v), v.bins, ds, ev)


def best_fit_for(ctx: Context, ds: Dataset) -> tuple[str | None, dict[str, FitResult]]:
    """Every map fitted and scored on held-out data (:func:`calib.maps.held_out_scoring`
    of the view's scoring), and the engine's choice among them
    (:func:`calib.maps.best_method`); a method the data cannot use is left out."""
    from calib import maps

    scoring = maps.held_out_scoring(ctx.view.scoring)
    fits: dict[str, FitResult] = {}
    for method in maps.METHODS:
        try:
            f = fit_for(ctx, ds, method=method, scoring=scoring)
        except CalibError:
            continue
        if f is not None:
            fits[method] = f
    return maps.best_method(fits), fits


@st.cache_data(max_entries=64, show_spinner="Auditing (bootstrap intervals)…")
def _audit_cached(key: str, scheme: str, bins: int, reps: int, seed: int, level: float, _table: CountTable,
                  _report: LoadReport) -> Audit:
    from calib import audit

    with heavy("the audit's bootstrap"):
        return audit.audit(_table, scheme=scheme, bins=bins, reps=reps, seed=seed, level=level,
                           load_report=_report)


def audit_for(ds: Dataset, v: views.View, *, groups: bool = False) -> Audit:
    """The engine's audit (:func:`calib.audit.audit`) of a dataset with the view's
    binning and bootstrap, exactly as ``calib audit`` computes it (cached by content
    and settings; renaming the model does not recompute it). Raises
    :class:`CalibError` when there is nothing to audit.

    A dataset of several groups (subjects, tasks) is audited with its groups pooled
    unless ``groups``: the pooled audit is the same (same table, same seed) as the
    pooled part of ``calib audit``, and the pages show only it (per-group figures come
    from :func:`group_comparison`). The per-group audits are for the JSON download:
    57 MMLU subjects at 2,000 resamples each cost 17 s, the pooled audit under 1 s.
    """
    table = ds.table if groups or len(ds.table.groups) < 2 else ds.table.pooled_over_groups()
    key = cache_key(ds) + ("" if table is ds.table else ":pooled")
    a = _audit_cached(key, ece_scheme(v), v.bins, v.reps, v.seed, v.level, table, ds.report)
    return replace(a, name=ds.name)


@st.cache_data(max_entries=32, show_spinner="Comparing the models…")
def _compare_cached(keys: tuple[str, ...], scheme: str, bins: int, reps: int, seed: int, level: float,
                    _datasets: tuple[Dataset, ...]) -> Comparison:
    from calib import compare

    with heavy("comparing the models"):
        return compare.compare(list(_datasets), scheme=scheme, bins=bins, reps=reps, seed=seed, level=level)


def comparison_for(ctx: Context, v: views.View) -> Comparison:
    """The comparison table of every loaded model (cached by content and settings)."""
    keys = tuple(f"{d.name}|{cache_key(d)}" for d in ctx.datasets)
    return _compare_cached(keys, ece_scheme(v), v.bins, v.reps, v.seed, v.level, ctx.datasets)


@st.cache_data(max_entries=16, show_spinner="Comparing the groups…")
def _groups_cached(key: str, scheme: str, bins: int, reps: int, seed: int, level: float,
                   _table: CountTable) -> Comparison:
    from calib import compare

    with heavy("comparing the groups"):
        return compare.compare({g: _table.select(i) for i, g in enumerate(_table.groups)}, scheme=scheme,
                               bins=bins, reps=reps, seed=seed, level=level)


def group_comparison(ds: Dataset, v: views.View) -> Comparison | None:
    """The comparison table of a dataset's groups (subjects, tasks), or ``None`` with one group."""
    if len(ds.table.groups) < 2:
        return None
    return _groups_cached(cache_key(ds), ece_scheme(v), v.bins, v.reps, v.seed, v.level, ds.table)


@st.cache_resource(max_entries=16, show_spinner="Preparing the routing resamples…")
def _basis_cached(key: str, mkey: tuple[object, ...], reps: int, seed: int, _table: CountTable,
                  _cmap: CalibrationMap | None) -> Basis:
    """The routing basis (cells sorted by score, bootstrap drawn once), shared read-only:
    ``cache_resource`` hands out the same object, so a threshold move costs a lookup,
    not an unpickling of the resamples."""
    from calib import routing

    with heavy("the routing resamples"):
        return routing.basis(_table, calibration=_cmap, reps=reps, seed=seed)


def map_key(v: views.View) -> tuple[object, ...]:
    """What a fitted map depends on in the view (a cache key of the figures drawn after it)."""
    return (v.method, v.scoring, v.folds, v.eval_model, v.seed, v.reps, v.level, ece_scheme(v), v.bins)


def routing_basis(ctx: Context, ds: Dataset, v: views.View) -> tuple[Basis, CalibrationMap | None, str | None]:
    """``(basis, map or None, note)`` for the view's threshold setting on ``ds``.

    Thresholds on the calibrated probability need a map that can be thresholded
    (:func:`calib.routing.threshold_refusal`); without one (method "none", a map that
    cannot be fitted or thresholded) the note says why and the stated value is used.
    """
    from calib import routing

    cmap, note = None, None
    if v.on == "calibrated":
        try:
            fit = fit_for(ctx, ds) if v.method != "none" else None
        except CalibError as exc:
            fit, note = None, f"no map ({exc}); thresholds are on the stated value"
        if fit is None and note is None:
            note = "choose a map in the Recalibration panel to threshold on the calibrated probability"
        elif fit is not None and (refusal := routing.threshold_refusal(fit.map)) is not None:
            fit, note = None, f"{refusal}: thresholds are on the stated value"
        if fit is not None:
            cmap = fit.map
    key = map_key(v) if cmap is not None else ()
    return _basis_cached(cache_key(ds), key, v.reps, v.seed, ds.table, cmap), cmap, note


# ----------------------------------------------------------------- the threshold decision (issue 11)
def cost_inputs(v: views.View) -> tuple[float | None, float | None, float | None]:
    """``(cost_review, cost_miss, cost_right)`` for the engine: ``None`` for all while
    neither a review nor a miss has a cost (the view's 0, 0 means "no costs given")."""
    if not (v.cost_review or v.cost_miss):
        return None, None, None
    return v.cost_review, v.cost_miss, v.cost_right


@st.cache_data(max_entries=32, show_spinner="Certifying the review threshold…")
def _decision_cached(key: str, mkey: tuple[object, ...], fit: str | None, target: float, confidence: float,
                     costs: tuple[float | None, float | None, float | None], capacity: str, by_group: bool,
                     reps: int, seed: int, level: float, _data: Dataset,
                     _cmap: CalibrationMap | None) -> Decision:
    from calib import decision

    items, share = decision.parse_capacity(capacity) if capacity else (None, None)
    with heavy("the threshold decision"):
        return decision.decide(_data, target=target, confidence=confidence, cost_review=costs[0],
                               cost_miss=costs[1], cost_right=costs[2], capacity=items, capacity_share=share,
                               by_group=by_group, calibration=_cmap, fit=fit, reps=reps, seed=seed, level=level)


def decision_for(ctx: Context, ds: Dataset, v: views.View) -> Decision:
    """The engine's threshold decision (:func:`calib.decision.decide`, what ``calib route
    --json`` prints) for ``ds`` at the view's target, confidence, costs and capacity,
    cached by content and settings: a threshold move does not recompute it.

    On the stated scale it certifies on every row. On the recalibrated probability the
    map and the threshold must not be chosen on the rows that certify it: the engine
    fits the view's method on one half and certifies on the other (``fit=``; its
    ``certified_on`` says so). Per-group thresholds when the data has groups. Raises
    :class:`CalibError` for a target, confidence, cost or capacity the engine refuses.
    """
    b, cmap, _note = routing_basis(ctx, ds, v)
    fit = v.method if cmap is not None and v.method != "none" else None
    by_group = len(ds.table.groups) >= 2
    return _decision_cached(cache_key(ds), map_key(v) if fit else (), fit, views.target_error(v), v.confidence,
                            cost_inputs(v), v.capacity, by_group, v.reps, v.seed, v.level, ds, None)


@st.cache_data(max_entries=16, show_spinner="Comparing the judges at the target…")
def _judges_cached(keys: tuple[str, ...], target: float, confidence: float,
                   costs: tuple[float | None, float | None, float | None], reps: int, seed: int, level: float,
                   _datasets: tuple[Dataset, ...]) -> JudgeComparison:
    from calib import decision

    with heavy("comparing the judges"):
        return decision.compare_judges(list(_datasets), target=target, confidence=confidence,
                                       cost_review=costs[0], cost_miss=costs[1], cost_right=costs[2], reps=reps,
                                       seed=seed, level=level)


def judges_for(ctx: Context, v: views.View) -> JudgeComparison:
    """Every loaded judge at the view's target (:func:`calib.decision.compare_judges`,
    what ``calib compare --target-error`` prints), paired on shared item ids."""
    keys = tuple(f"{d.name}|{cache_key(d)}" for d in ctx.datasets)
    return _judges_cached(keys, views.target_error(v), v.confidence, cost_inputs(v), v.reps, v.seed, v.level,
                          tuple(ctx.datasets))
