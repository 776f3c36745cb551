"""Static figures without a browser: the reliability diagram as SVG, PNG or PDF (matplotlib).

``calib audit --plot out.svg|out.png`` and ``calib.audit(df).figure().save(...)`` draw
here; the interactive HTML diagram (:mod:`calib.present.figures`, Plotly) stays the
default. matplotlib's Agg and SVG backends need no browser, no display and no network,
unlike kaleido, which drives a Chrome.

The diagram is the one of :func:`calib.present.reliability_page.reliability_figure`,
for paper: top panel, the hit rate at each stated value (or per bin) with its Wilson
interval, marker area growing with n, each point labelled with its n when there are
few; the CORP isotonic curve with its bootstrap confidence band and the grey
consistency band (where a calibrated judge's curve would fall); the y = x line. Bottom
panel: how many answers sat at each stated value (or bin). Every number drawn comes
from :mod:`calib.curves`; nothing is computed here.

User text (the dataset name) is drawn as plain text: ``$`` is escaped so that
matplotlib's mathtext does not read it, and the SVG writer escapes XML. Text stays
text in the SVG (``svg.fonttype: none``), so a figure can be searched and edited.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calib.errors import CalibError

if TYPE_CHECKING:
    from calib.audit import Audit
    from calib.table import CountTable

#: Formats :meth:`StaticFigure.save` writes, by file extension.
FORMATS: tuple[str, ...] = ("svg", "png", "pdf")
#: The same colours as the interactive figures (Okabe-Ito blue and vermilion, grey).
POINTS_COLOR, CORP_COLOR, REFERENCE_COLOR = "#0072B2", "#D55E00", "#888888"
#: Points labelled with their n when there are at most this many.
LABEL_POINTS = 12
#: Size (inches) and resolution of the PNG.
SIZE, DPI = (6.4, 6.0), 200
_RC: dict[str, Any] = {"svg.fonttype": "none", "svg.hashsalt": "calib", "font.size": 9,
                       "axes.spines.top": False, "axes.spines.right": False}


def plain_text(text: str) -> str:
    """User text as matplotlib draws it literally (no mathtext)."""
    return str(text).replace("$", r"\$")


@dataclass
class StaticFigure:
    """A drawn matplotlib figure: :meth:`save` to a file, :meth:`to_svg`, and the
    notebook display hooks (``_repr_svg_``)."""

    figure: Any  # matplotlib.figure.Figure

    def save(self, path: str | Path, fmt: str | None = None) -> Path:
        """Write the figure; the format is the extension's unless ``fmt`` is given."""
        path = Path(path)
        fmt = (fmt or path.suffix.lstrip(".")).lower()
        if fmt not in FORMATS:
            raise CalibError(f"{path}: cannot write a {fmt or 'extensionless'!r} figure; "
                             f"the name must end in {', '.join('.' + f for f in FORMATS)}")
        import matplotlib

        try:
            if fmt == "svg":
                path.write_text(self.to_svg(), encoding="utf-8")
            else:
                with matplotlib.rc_context(_RC):
                    self.figure.savefig(path, format=fmt, dpi=DPI, bbox_inches="tight")
        except OSError as exc:
            raise CalibError(f"{path}: cannot write the file ({exc.strerror or exc})") from None
        return path

    def to_svg(self) -> str:
        """The SVG document from its ``<svg>`` root (no XML prologue or DOCTYPE, so that it
        can be written to a file or inlined in HTML as it is)."""
        import io

        import matplotlib

        buf = io.StringIO()
        with matplotlib.rc_context(_RC):
            self.figure.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
        text = buf.getvalue()
        return text[text.find("<svg"):]

    def _repr_svg_(self) -> str:
        return self.to_svg()


def reliability_diagram(result: Audit, table: CountTable, *, name: str | None = None) -> StaticFigure:
    """The reliability diagram of ``table`` under ``result``'s settings (scheme, bins,
    resamples, seed, level), as :func:`~calib.present.reliability_page.reliability_figure`
    computes it."""
    from calib import curves

    points, corp = curves.audit_diagram(table, scheme=result.scheme, bins=result.bins, level=result.level,
                                        reps=result.reps, seed=result.seed)
    return draw(points, corp, name=result.name if name is None else name, level=result.level, reps=result.reps,
                scale=table.scale)


def draw(points: Any, corp: Any, *, name: str, level: float, reps: int, scale: Any) -> StaticFigure:
    """Lay out a :class:`~calib.curves.ValuePoints` or :class:`~calib.curves.BinnedPoints`
    and a :class:`~calib.curves.IsotonicCurve` (in percent of the probability scale) of
    a table on ``scale`` (:class:`calib.scale.Scale`)."""
    import matplotlib

    matplotlib.use("Agg", force=False)  # no display, no browser
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=SIZE, layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
        xs = _points(top, points)
        _corp(top, corp, level, reps)
        top.plot([0, 100], [0, 100], color=REFERENCE_COLOR, lw=1, ls="--", label="perfect calibration")
        # the page's ranges (calib.present.axes): the data's extent, the diagonal still crossing
        x_range, y_range = _ranges(points, corp)
        top.set(xlim=x_range, ylim=y_range, ylabel="share right (%)")
        top.set_title(f"Reliability diagram: {plain_text(name)}", loc="left", fontsize=10)
        top.legend(loc="best", fontsize=7, frameon=False)  # where it hides the least (the diagonal too)
        _counts(bottom, points, xs, scale)
        n = points.n
        bottom.set(ylabel="answers", xlabel=f"stated confidence (% of the {scale.name} scale)")
        bottom.text(0.0, 1.02, f"n = {int(n.sum()):,}", transform=bottom.transAxes, fontsize=7)
    return StaticFigure(fig)


def _ranges(points: Any, corp: Any) -> tuple[tuple[float, float], tuple[float, float]]:
    """The axes of :func:`calib.present.figures.reliability` for the same curves (percent)."""
    from calib import curves
    from calib.present.axes import diagonal_ranges

    if isinstance(points, curves.ValuePoints):
        xs, ys = [*(100 * points.prob)], [*(100 * points.lo), *(100 * points.hi), *(100 * points.hit_rate)]
    else:
        xs, ys = [*(100 * points.mean_prob)], [*(100 * points.ci_lo), *(100 * points.ci_hi), *(100 * points.hit_rate)]
    if corp is not None and corp.n.size:
        xs += [*(100 * corp.prob)]
        ys += [*(100 * corp.fitted), *(100 * corp.confidence_lo), *(100 * corp.confidence_hi)]
    return diagonal_ranges(xs, ys)


def _points(ax: Any, points: Any) -> Any:
    """Hit-rate points with their Wilson intervals (area ~ n); returns their x (percent)."""
    import numpy as np

    from calib import curves

    if isinstance(points, curves.ValuePoints):
        x, lo, hi, label = 100 * points.prob, 100 * points.lo, 100 * points.hi, "hit rate at each stated value"
    else:
        x, lo, hi, label = 100 * points.mean_prob, 100 * points.ci_lo, 100 * points.ci_hi, "hit rate per bin"
    y, n = 100 * points.hit_rate, points.n
    biggest = max(1, int(n.max())) if n.size else 1
    # lengths never below 0 (matplotlib refuses them): a bound at the hit rate is a zero-length bar
    ax.errorbar(x, y, yerr=[np.maximum(y - lo, 0), np.maximum(hi - y, 0)], fmt="none", ecolor=POINTS_COLOR,
                elinewidth=1, capsize=2, zorder=3)
    ax.scatter(x, y, s=12 + 180 * n / biggest, color=POINTS_COLOR, edgecolor="white", lw=0.6, zorder=4,
               label=f"{label} (Wilson interval; area ~ n)")
    if len(x) <= LABEL_POINTS:
        for xi, yi, ni in zip(x, y, n, strict=True):
            ax.annotate(f"{int(ni):,}", (xi, yi), textcoords="offset points", xytext=(5, -9), fontsize=6.5,
                        color="#333333")
    return x


def _counts(ax: Any, points: Any, xs: Any, scale: Any) -> None:
    """Answers per stated value (a thin bar at the value) or per bin (a bar over the bin)."""
    import numpy as np

    from calib import curves

    if isinstance(points, curves.BinnedPoints) and points.scheme == "width":
        left = 100 * np.asarray(scale.to_prob(points.lo), dtype=float)
        right = 100 * np.asarray(scale.to_prob(points.hi), dtype=float)
        ax.bar(left, points.n, width=right - left, align="edge", color=POINTS_COLOR, alpha=0.8,
               edgecolor="white", lw=0.5)
    else:  # per value, or mass bins (whose edges are their smallest and largest value)
        # as wide as the page's bars: a share of the closest gap, never more than 4% of the axis
        lo, hi = ax.get_xlim()
        gaps = np.diff(np.unique(np.asarray(xs, dtype=float)))
        width = min(0.6 * float(gaps.min()) if gaps.size else hi - lo, 0.04 * (hi - lo))
        ax.bar(xs, points.n, width=width, color=POINTS_COLOR, alpha=0.8)


def _corp(ax: Any, corp: Any, level: float, reps: int) -> None:
    """The CORP curve with its confidence band and the consistency band."""
    import numpy as np

    if corp is None or not corp.n.size:
        return
    x = 100 * corp.prob
    band = f"{100 * level:g}%, {reps:,} resamples"
    if np.isfinite(corp.consistency_lo).any():
        ax.fill_between(x, 100 * corp.consistency_lo, 100 * corp.consistency_hi, color=REFERENCE_COLOR, alpha=0.2,
                        lw=0, step=None, label=f"consistency band ({band})")
    if np.isfinite(corp.confidence_lo).any():
        ax.fill_between(x, 100 * corp.confidence_lo, 100 * corp.confidence_hi, color=CORP_COLOR, alpha=0.22, lw=0,
                        label=f"confidence band ({band})")
    ax.plot(x, 100 * corp.fitted, color=CORP_COLOR, lw=1.6, label="CORP isotonic curve", zorder=2)
