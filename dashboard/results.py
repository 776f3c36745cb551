"""The engine's results for the pages, cached by content and settings.

Each ``*_for`` function calls the same :mod:`calib.runs` function the CLI calls
(``calib audit``, ``calib compare``, ``calib fit``...) with one
:class:`~calib.runs.settings.Settings` made from the view (:func:`settings_of`), inside
a heavy-work slot (:func:`dashboard.runtime.heavy`), and caches the result by
``(data key, settings)``: the dataset's content key (:func:`dashboard.entries.cache_key`),
never the dataset object (renaming a model recomputes nothing), and only the settings the
result reads (:meth:`~calib.runs.settings.Settings.only`: a threshold move does not miss
the audit's cache). The engine is imported on first use: the Data page's first paint
does not wait for it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.runs.settings import Settings
from dashboard.context import Context
from dashboard.entries import cache_key
from dashboard.runtime import heavy

if TYPE_CHECKING:  # the engine's types, without importing it on the cold start's path
    from calib.curves import BinnedPoints, IsotonicCurve, ValuePoints
    from calib.runs.audit import Audit, Comparison
    from calib.runs.decide import Decision, JudgeComparison
    from calib.runs.maps import CalibrationMap, FitResult
    from calib.runs.route import Basis
    from calib.table import CountTable

    Curve = ValuePoints | BinnedPoints | IsotonicCurve

#: What a fitted map reads of the settings.
MAP_FIELDS: tuple[str, ...] = ("method", "scoring", "folds", "seed", "reps", "level", "scheme", "bins")
#: What the threshold decision reads of the settings (its map's fields apart).
DECISION_FIELDS: tuple[str, ...] = ("target", "confidence", "cost_review", "cost_miss", "cost_right", "capacity",
                                    "by_group", "reps", "seed", "level")


def settings_of(v: views.View) -> Settings:
    """The view's settings as one value: its binning, bootstrap, map and scoring, thresholds,
    target, confidence, costs (all ``None`` while neither a review nor a miss has a cost: the
    view's 0 and 0 mean "no costs given") and capacity."""
    c_r, c_m, c_ok = cost_inputs(v)
    return Settings(level=v.level, reps=v.reps, seed=v.seed, scheme=v.scheme, bins=v.bins, method=v.method,
                    scoring=v.scoring, folds=v.folds, on=v.on, lo=v.lo, hi=v.hi, target=v.target,
                    confidence=v.confidence, cost_review=c_r, cost_miss=c_m, cost_right=c_ok, capacity=v.capacity)


def ece_scheme(v: views.View) -> str:
    """The binning scheme of every ECE figure (the CORP view reads its ECE per value / auto)."""
    return settings_of(v).ece_scheme


@st.cache_data(max_entries=64, show_spinner="Computing the reliability curve…")
def _curve_cached(key: str, s: Settings, _table: CountTable) -> Curve:
    from calib.runs.audit import curve

    with heavy("the reliability curve's bootstrap"):
        return curve(_table, s)


def curve_for(ds: Dataset, v: views.View, table: CountTable | None = None, *, key_extra: str = "") -> Curve:
    """The reliability curve of the view's scheme for a dataset (cached by content)."""
    t = ds.table if table is None else table
    return _curve_cached(cache_key(ds) + key_extra, settings_of(v).only("scheme", "bins", "level", "reps", "seed"), t)


@st.cache_data(max_entries=64, show_spinner="Fitting and scoring the map…")
def _fit_cached(key: str, eval_key: str, s: Settings, _data: Dataset, _eval: Dataset | None) -> FitResult:
    from calib.runs.maps import fit

    with heavy("fitting the map"):
        return fit(_data, s, eval_data=_eval)


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
    s = replace(settings_of(v), method=method, scoring=scoring, scheme=ece_scheme(v)).only(*MAP_FIELDS)
    return _fit_cached(cache_key(ds), "" if ev is None else cache_key(ev), s, ds, ev)


def best_fit_for(ctx: Context, ds: Dataset) -> tuple[str | None, dict[str, FitResult]]:
    """Every map fitted and scored on held-out data (:func:`calib.maps.held_out_scoring`
    of the view's scoring), and the engine's choice among them
    (:func:`calib.maps.best_method`); a method the data cannot use is left out."""
    from calib.runs import maps

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
def _audit_cached(key: str, s: Settings, _data: Dataset, _table: CountTable) -> Audit:
    from calib.runs.audit import audit

    with heavy("the audit's bootstrap"):
        return audit(_data, s, table=_table)


def audit_for(ds: Dataset, v: views.View, *, groups: bool = False) -> Audit:
    """The audit (:func:`calib.runs.audit.audit`) of a dataset with the view's
    binning and bootstrap, exactly as ``calib audit`` computes it (cached by content
    and settings; renaming the model does not recompute it). Raises
    :class:`CalibError` when there is nothing to audit.

    A dataset of several groups (subjects, tasks) is audited with its groups pooled
    unless ``groups``: the pooled audit is the same (same table, same seed) as the
    pooled part of ``calib audit``, and the pages show only it (per-group figures come
    from :func:`group_comparison`). The per-group audits are for the JSON download:
    57 MMLU subjects at 2,000 resamples each cost 17 s, the pooled audit under 1 s.
    """
    from calib.runs.audit import AUDIT_FIELDS

    table = ds.table if groups or len(ds.table.groups) < 2 else ds.table.pooled_over_groups()
    key = cache_key(ds) + ("" if table is ds.table else ":pooled")
    a = _audit_cached(key, settings_of(v).only(*AUDIT_FIELDS), ds, table)
    return replace(a, name=ds.name)


@st.cache_data(max_entries=32, show_spinner="Comparing the models…")
def _compare_cached(keys: tuple[str, ...], s: Settings, _datasets: tuple[Dataset, ...]) -> Comparison:
    from calib.runs.audit import compare

    with heavy("comparing the models"):
        return compare(list(_datasets), s)


def comparison_for(ctx: Context, v: views.View) -> Comparison:
    """The comparison table of every loaded model (cached by content and settings)."""
    from calib.runs.audit import AUDIT_FIELDS

    keys = tuple(f"{d.name}|{cache_key(d)}" for d in ctx.datasets)
    return _compare_cached(keys, settings_of(v).only(*AUDIT_FIELDS), ctx.datasets)


@st.cache_data(max_entries=16, show_spinner="Comparing the groups…")
def _groups_cached(key: str, s: Settings, _table: CountTable) -> Comparison:
    from calib.runs.audit import compare_groups

    with heavy("comparing the groups"):
        return compare_groups(_table, s)


def group_comparison(ds: Dataset, v: views.View) -> Comparison | None:
    """The comparison table of a dataset's groups (subjects, tasks), or ``None`` with one group."""
    from calib.runs.audit import AUDIT_FIELDS

    if len(ds.table.groups) < 2:
        return None
    return _groups_cached(cache_key(ds), settings_of(v).only(*AUDIT_FIELDS), ds.table)


@st.cache_resource(max_entries=16, show_spinner="Preparing the routing resamples…")
def _basis_cached(key: str, mkey: tuple[object, ...], s: Settings, _table: CountTable,
                  _cmap: CalibrationMap | None) -> Basis:
    """The routing basis (cells sorted by score, bootstrap drawn once), shared read-only:
    ``cache_resource`` hands out the same object, so a threshold move costs a lookup,
    not an unpickling of the resamples."""
    from calib.runs.route import basis

    with heavy("the routing resamples"):
        return basis(_table, s, calibration=_cmap)


def map_key(v: views.View) -> tuple[object, ...]:
    """What a fitted map depends on in the view (a cache key of the figures drawn after it)."""
    return (settings_of(v).only(*MAP_FIELDS), v.eval_model)


def routing_basis(ctx: Context, ds: Dataset, v: views.View) -> tuple[Basis, CalibrationMap | None, str | None]:
    """``(basis, map or None, note)`` for the view's threshold setting on ``ds``.

    Thresholds on the calibrated probability need a map that can be thresholded
    (:func:`calib.routing.threshold_refusal`); without one (method "none", a map that
    cannot be fitted or thresholded) the note says why and the stated value is used.
    """
    from calib.runs.route import threshold_refusal

    cmap, note = None, None
    if v.on == "calibrated":
        try:
            fit = fit_for(ctx, ds) if v.method != "none" else None
        except CalibError as exc:
            fit, note = None, f"no map ({exc}); thresholds are on the stated value"
        if fit is None and note is None:
            note = "choose a map in the Recalibration panel to threshold on the calibrated probability"
        elif fit is not None and (refusal := threshold_refusal(fit.map)) is not None:
            fit, note = None, f"{refusal}: thresholds are on the stated value"
        if fit is not None:
            cmap = fit.map
    key = map_key(v) if cmap is not None else ()
    return _basis_cached(cache_key(ds), key, settings_of(v).only("reps", "seed"), ds.table, cmap), cmap, note


# ----------------------------------------------------------------- the threshold decision (issue 11)
def cost_inputs(v: views.View) -> tuple[float | None, float | None, float | None]:
    """``(cost_review, cost_miss, cost_right)`` for the engine: ``None`` for all while
    neither a review nor a miss has a cost (the view's 0, 0 means "no costs given")."""
    if not (v.cost_review or v.cost_miss):
        return None, None, None
    return v.cost_review, v.cost_miss, v.cost_right


@st.cache_data(max_entries=32, show_spinner="Certifying the review threshold…")
def _decision_cached(key: str, mkey: tuple[object, ...], fit: str | None, s: Settings, _data: Dataset) -> Decision:
    from calib.runs.decide import decide

    with heavy("the threshold decision"):
        return decide(_data, s, fit=fit)


def decision_for(ctx: Context, ds: Dataset, v: views.View) -> Decision:
    """The threshold decision (:func:`calib.runs.decide.decide`, what ``calib route
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
    s = replace(settings_of(v), by_group=len(ds.table.groups) >= 2).only(*DECISION_FIELDS)
    return _decision_cached(cache_key(ds), map_key(v) if fit else (), fit, s, ds)


@st.cache_data(max_entries=16, show_spinner="Comparing the judges at the target…")
def _judges_cached(keys: tuple[str, ...], s: Settings, _datasets: tuple[Dataset, ...]) -> JudgeComparison:
    from calib.runs.decide import compare_judges

    with heavy("comparing the judges"):
        return compare_judges(list(_datasets), s)


def judges_for(ctx: Context, v: views.View) -> JudgeComparison:
    """Every loaded judge at the view's target (:func:`calib.runs.decide.compare_judges`,
    what ``calib compare --target-error`` prints), paired on shared item ids."""
    keys = tuple(f"{d.name}|{cache_key(d)}" for d in ctx.datasets)
    return _judges_cached(keys, settings_of(v).only(*DECISION_FIELDS), tuple(ctx.datasets))
