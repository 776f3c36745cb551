"""The review threshold: its axis for one dataset, the sidebar widgets, the routing at
the view's thresholds and the fragment that reruns alone when a slider moves.

The defaults come from the engine (:func:`calib.routing.default_thresholds`); the view
keeps ``lo``/``hi`` as ``None`` until a person moves a slider.

On the stated scale the slider's positions are the distinct thresholds that change
the routing (:func:`calib.thresholds.positions`, issue 22): the values the judge used, and
the scale's top when above them, so each key press moves to the next distinct routing
(a 0-100 judge saying six values has six or seven positions, not 101, and 93 is no
longer a position that routes as 95 does); a threshold from elsewhere (a link) is
shown at the position that routes alike. Beyond :data:`calib.thresholds.MAX_POSITIONS`
distinct values (a continuous score) the positions are quantiles of them, always with
the default, the current and (on the Routing page) the recommended threshold. On the
calibrated probability the slider keeps steps of 0.01.

On a fragment rerun a widget is seeded from the view only when it shows something else
(a button moved the view); a full run always seeds it. Seeding it on every run would make Streamlit
force the value a late rerun saw back into the browser, undoing key presses made since
(issue 22: 15 fast presses from 80 landed on 93). On the Routing page the review
threshold's widgets are in the page body, below the decision card, not in the sidebar
(a phone hides the sidebar, issue 22); one widget per setting, since two widgets on one
view undo each other's key presses when a rerun is cut short.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import explain
from calib.runs.axis import band_upper, default_thresholds, is_continuous, positions, snap_position
from calib.scale import Scale
from dashboard.context import Context
from dashboard.keys import FRAGMENT_TIMING_KEY
from dashboard.layout import THRESHOLD_ON_LABELS, md_escape, metric, show_error
from dashboard.results import routing_basis, settings_of
from dashboard.runtime import rerun_if_link_gone
from dashboard.state import change_view, get_view, set_view, sync_url

if TYPE_CHECKING:

    from calib.rows import Judgments
    from calib.runs.maps import CalibrationMap
    from calib.runs.route import Basis, Routing

    Detail = Callable[[Context, Dataset, Routing, "ThresholdAxis", Basis, CalibrationMap | None,
                       Callable[[], object]], None]


@dataclass(frozen=True)
class ThresholdAxis:
    """Where a threshold can sit for one dataset: bounds, step, defaults, units."""

    on: str
    lo: float
    hi: float
    step: float
    default_lo: float
    default_hi: float
    unit: str  # shown after numbers: "" for a stated scale, " (probability)" for calibrated
    #: the only positions (a select slider) on the stated scale; ``None``: every step
    positions: tuple[float, ...] | None = None
    #: the positions are quantiles of a continuous score (not every distinct routing)
    continuous: bool = False

    @property
    def format(self) -> str:
        """printf format of the slider: as many decimals as the step has."""
        import math

        decimals = max(0, -math.floor(math.log10(self.step) + 1e-9))
        return f"%.{decimals}f"

    def above(self, x: float) -> float | None:
        """The next position (or step) above ``x``, ``None`` at the top."""
        if self.positions is not None:
            return next((p for p in self.positions if p > x), None)
        return x + self.step if x + self.step <= self.hi + 1e-12 else None

    def snap(self, x: float) -> float:
        """``x`` at the position that routes as it does (every distinct routing is a
        position), unchanged on a continuous score's quantiles or off the stated scale."""
        return x if self.positions is None or self.continuous else snap_position(self.positions, x)

    def to_percent(self, x: float, scale: Scale) -> float:
        """Position on the reliability diagram's x axis (probability in %)."""
        return 100.0 * (float(scale.to_prob(x)) if self.on == "stated" else x)


def threshold_axis(ds: Dataset, on: str, extra: Sequence[float] = ()) -> ThresholdAxis:
    """The slider's range: the stated scale, or [0, 1] for calibrated probabilities.

    On the stated scale the positions are :func:`calib.thresholds.positions` (``extra``
    added on a continuous score); the defaults are the engine's
    (:func:`calib.routing.default_thresholds`), at the position that routes alike.
    """
    import math

    s = ds.table.scale
    low, high = default_thresholds(s, on)
    if on == "calibrated":
        return ThresholdAxis("calibrated", 0.0, 1.0, 0.01, low, high, " (probability)")
    span = s.hi - s.lo
    finest = 10 ** math.floor(math.log10(span)) / 100 if span > 0 else 0.01
    used = ds.table.value[ds.table.n > 0]
    continuous = is_continuous(used)
    where = positions(used, float(s.hi), (low, high, *extra))
    axis = ThresholdAxis("stated", float(s.lo), float(s.hi), float(finest), low, high, "", where, continuous)
    return replace(axis, default_lo=axis.snap(low), default_hi=axis.snap(high))


def current_thresholds(v: views.View, axis: ThresholdAxis) -> tuple[float, float | None]:
    """The view's thresholds inside the axis, the default where not set."""
    vv = views.clamp_thresholds(v, axis.lo, axis.hi)
    lo = axis.default_lo if vv.lo is None else axis.snap(vv.lo)
    return lo, band_upper(lo, None if vv.hi is None else axis.snap(vv.hi))


def fmt_threshold(x: float, axis: ThresholdAxis) -> str:
    if axis.positions is not None:  # the stated values as said; a continuous score's to 4 digits
        return f"{x:.4g}" if axis.continuous else f"{x:g}"
    return f"{x:.2f}"


def route_now(ctx: Context, ds: Dataset, v: views.View, axis: ThresholdAxis | None = None
              ) -> tuple[Routing, ThresholdAxis, Basis, CalibrationMap | None, str | None]:
    """Routing of ``ds`` at the view's thresholds: ``(routing, axis, basis, map, note)``;
    ``axis``, when the caller has it for the basis's scale, is not computed again."""
    from calib.runs.route import route_at

    b, cmap, note = routing_basis(ctx, ds, v)
    if axis is None or axis.on != b.on:
        axis = threshold_axis(ds, b.on, _current(v))
    lo, hi = current_thresholds(replace(v, on=b.on), axis)
    r = route_at(b, settings_of(v), lo, hi)  # the view's costs, "none" while both are 0
    return r, axis, b, cmap, note


def review_queue_csv(rows: Judgments, lower: float, cmap: CalibrationMap | None = None) -> bytes:
    """The review queue (items below ``lower``) as CSV bytes for download, with
    spreadsheet formulas neutralised (:func:`calib.routing.queue_to_csv`)."""
    from calib.runs.route import queue_csv

    return queue_csv(rows, lower, calibration=cmap)[0]


# ----------------------------------------------------------------- widgets
def _on_threshold_on(key: str) -> None:
    change_view(on=st.session_state[key], lo=None, hi=None)


def _on_lo(key: str, axis: ThresholdAxis) -> None:
    v = get_view()
    lo = float(st.session_state[key])
    hi = v.hi
    if hi is not None and band_upper(lo, hi) is None:  # the lower slider passed the upper one: it moves up
        hi = axis.above(lo)
    set_view(views.with_changes(v, lo=lo, hi=hi))


def _on_hi(key: str) -> None:
    change_view(hi=float(st.session_state[key]))


def _on_hi_toggle(key: str, axis: ThresholdAxis) -> None:
    v = get_view()
    if st.session_state[key]:
        lo = axis.default_lo if v.lo is None else axis.snap(v.lo)
        nxt = axis.above(lo)
        hi = None if nxt is None else max(axis.default_hi, nxt)
        set_view(views.with_changes(v, lo=lo, hi=hi))
    else:
        set_view(views.with_changes(v, hi=None))


def _widget_on(v: views.View) -> str:
    """What the widgets threshold: the view's choice, the stated value without a map."""
    return "stated" if v.method == "none" else v.on


def _current(v: views.View) -> tuple[float, ...]:
    """The view's thresholds, which a continuous score's positions must hold."""
    return tuple(x for x in (v.lo, v.hi) if x is not None)


def _threshold_widgets(ds: Dataset, v: views.View, axis: ThresholdAxis) -> ThresholdAxis:
    """The sidebar controls of the review threshold (inside the fragment) on ``axis``
    (computed once per run by :func:`_threshold_body`)."""
    st.subheader("Review threshold")
    on_disabled = v.method == "none"
    on = _widget_on(v)
    _seed("w_on", on)
    st.selectbox("Threshold on", views.THRESHOLD_ON, format_func=THRESHOLD_ON_LABELS.__getitem__,
                 key="w_on", on_change=_on_threshold_on, args=("w_on",), disabled=on_disabled,
                 help="Recalibrated: the probability the map of the Recalibration panel gives each stated value."
                      + (" Choose a map there first (Map, above)." if on_disabled else ""))
    lo, hi = current_thresholds(replace(v, on=on), axis)
    _slider("Review threshold", "w_lo", lo, axis, axis.lo, _on_lo, ("w_lo", axis),
            help="Items below it go to a person; items at or above it are accepted unseen.")
    _seed("w_hi_on", hi is not None)
    st.checkbox("Add an upper threshold", key="w_hi_on", on_change=_on_hi_toggle, args=("w_hi_on", axis),
                help="Then only items at or above the upper threshold are accepted unseen; the ones between "
                     "the two thresholds form a middle band.")
    if hi is not None:
        _slider("Upper threshold", "w_hi", hi, axis, min(axis.hi, lo + axis.step), _on_hi, ("w_hi",),
                above=lo)
    return axis


def _slider(label: str, key: str, value: float, axis: ThresholdAxis, low: float, on_change: Callable[..., None],
            args: tuple[object, ...], *, above: float | None = None, help: str | None = None) -> None:
    """A threshold slider: every step of the axis, or its positions (a select slider
    over them, those above ``above`` for the upper threshold). Seeded only when it
    shows another value than the view's (see the module's docstring)."""
    if axis.positions is None:
        _seed(key, float(value))
        st.slider(label, min_value=low, max_value=axis.hi, step=axis.step, key=key, format=axis.format,
                  on_change=on_change, args=args, help=help)
        return
    options = [x for x in axis.positions if above is None or x > above] or [float(value)]
    _seed(key, min(options, key=lambda x: abs(x - value)))
    st.select_slider(label, options=options, key=key, format_func=lambda x: fmt_threshold(x, axis),
                     on_change=on_change, args=args, help=help)


def _seed(key: str, value: object) -> None:
    """Set widget ``key`` to ``value``, on a fragment rerun only when it shows another
    value (an assignment, even of the same value, makes Streamlit push it to the browser
    over newer key presses). A full run always sets it: the same key on another page is
    another widget, whose state the session's value does not carry over."""
    if st.session_state.get(_FULL_RUN_KEY) or st.session_state.get(key) != value:
        st.session_state[key] = value


def routing_metrics(r: Routing, compact: bool = False) -> None:
    """The routing numbers under their stable labels (browser tests look them up by label)."""
    from calib.present.routing_table import routing_rows

    total = r.to_person + r.accepted + (r.middle if r.upper is not None else 0)

    def help_(key: str, x: float | None) -> str:
        return f"{explain.help_text(key)}  \n{explain.what_this_means(key, x, total=total)}"

    keys = ("to_person", "middle", "accepted", "accuracy_accepted", "errors_slipping", "errors_caught")
    items = [(row.label, row.text, row.level_interval(r.level) or None, help_(row.key, row.value))
             for row in routing_rows(r, keys)]
    small = explain.routing_small_sample(r)  # plain text: no user data in it, but never markdown
    if compact:
        for label, value, interval, text in items:
            metric(st, label, value, interval, help=text)
        if small is not None:
            st.caption(md_escape(small))
        return
    # six in one row truncate their labels at laptop width: two rows of three then
    per_row = 3 if len(items) > 5 else len(items)
    for start in range(0, len(items), per_row):
        row = items[start:start + per_row]
        for c, (label, value, interval, text) in zip(st.columns(per_row), row, strict=False):
            metric(c, label, value, interval, help=text)
    if small is not None:
        st.caption(md_escape(small))


# ----------------------------------------------------------------- the fragment
def threshold_panel(ctx: Context, detail: Detail | None = None) -> None:
    """The review-threshold panel: sliders in the sidebar with the numbers next to them,
    or (on the Routing page) ``detail`` in the main area, which draws the sliders itself
    (its last argument draws them) — all in one fragment, so a threshold move reruns only
    this, not the page."""
    if not ctx.datasets:
        return
    st.session_state[_PAGE_VIEW_KEY] = _beyond_thresholds(get_view())
    st.session_state[_FULL_RUN_KEY] = True
    try:
        _threshold_fragment(ctx, detail)
    finally:
        st.session_state[_FULL_RUN_KEY] = False


#: Session key of the view the page's last full run was drawn with, thresholds left out.
_PAGE_VIEW_KEY = "calib_page_view"
#: Session key: the fragment runs as part of the whole page (not on its own).
_FULL_RUN_KEY = "calib_threshold_full_run"


def _beyond_thresholds(v: views.View) -> views.View:
    return replace(v, lo=None, hi=None)


@st.fragment
def _threshold_fragment(ctx: Context, detail: Detail | None) -> None:
    if not st.session_state.get(_FULL_RUN_KEY):
        # a slider move reruns only this: a share link revoked since the page ran must
        # end here too (a full run checked it at the page's start, issue 22)
        rerun_if_link_gone()
    if st.session_state.get(_PAGE_VIEW_KEY) != _beyond_thresholds(get_view()):
        # a widget of the fragment changed more than the thresholds (target, confidence,
        # costs, what the threshold is on): the page above the fragment (its headline)
        # was drawn from the old settings, so the whole page runs again (issue 22)
        st.rerun()
    started = time.perf_counter()
    try:
        _threshold_body(ctx, detail)
    finally:
        st.session_state[FRAGMENT_TIMING_KEY] = time.perf_counter() - started


def _recommended(ctx: Context, ds: Dataset, v: views.View) -> tuple[float, ...]:
    """The recommended threshold (a position a continuous score's slider must offer),
    when the engine gives one; the decision itself is shown (or refused) by the page."""
    from dashboard.results import decision_for

    try:
        t = decision_for(ctx, ds, v).recommendation.threshold
    except CalibError:
        return ()
    return () if t is None else (float(t),)


def _threshold_body(ctx: Context, detail: Detail | None) -> None:
    v = get_view()
    ds = next((d for d in ctx.datasets if d.name == v.model), ctx.datasets[0])
    on = _widget_on(v)
    continuous = on == "stated" and is_continuous(ds.table.value[ds.table.n > 0])
    # a continuous score's select slider must offer the recommended threshold too
    extra = _recommended(ctx, ds, v) if detail is not None and continuous else ()
    axis = threshold_axis(ds, on, (*extra, *_current(v)))  # once per run: widgets and routing share it

    def controls() -> ThresholdAxis:
        return _threshold_widgets(ds, v, axis)

    if detail is None:
        with st.sidebar:
            controls()
    try:
        r, axis, b, cmap, note = route_now(ctx, ds, v, axis)
    except CalibError as exc:
        with st.sidebar if detail is None else st.container():
            if detail is not None:
                controls()
            show_error(exc)
        return
    if detail is None:
        with st.sidebar:
            if note:
                st.caption(md_escape(note))
            routing_metrics(r, compact=True)
    else:
        if note:
            st.info(md_escape(note))
        detail(ctx, ds, r, axis, b, cmap, controls)
    sync_url(get_view())
