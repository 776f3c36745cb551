"""Command line: ``python -m calib SUBCOMMAND ...`` (also the console script ``calib``).

Argument parsing and printing only: each subcommand is one small function that
loads, calls the engine and prints what it returned. Flags are compatible with
calikit's, so existing commands work unchanged::

    calib audit llama.jsonl --rescale 0,100
    calib fit odd.jsonl --method platt --eval even.jsonl --rescale 0,100

Subcommands: ``audit`` (the calibration audit, ``--plot`` for the reliability
diagram), ``fit`` (a recalibration map, scored honestly), ``apply`` (a map to a new
file), ``compare`` (several models side by side), ``route`` (what a review
threshold does). ``--json`` prints exactly one strict JSON object (no NaN or
Infinity; ``null`` where a number is undefined); the keys are documented in the
README.

Exit codes: 0 success; 1 a ``--fail-above-*`` threshold was exceeded (for CI
pipelines); 2 unusable input or options (the message, never a traceback, goes to
stderr); 3 an internal error (a bug: please report it; ``CALIB_DEBUG=1`` shows
the traceback).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import math
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calib.errors import CalibError

if TYPE_CHECKING:  # the engine is imported inside each subcommand: `calib --help` stays fast
    from calib.audit import Audit
    from calib.dataset import Dataset
    from calib.loading import LoadOptions
    from calib.maps import CalibrationMap, FitResult
    from calib.routing import Routing, ThresholdChoice

EXIT_OK, EXIT_THRESHOLD, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
#: ``calib fit --method`` choices: :data:`calib.maps.METHODS`, spelled out so that
#: building the parser (``calib --help``) does not import the engine.
METHODS: tuple[str, ...] = ("platt", "isotonic", "temperature", "beta", "histogram")
#: Field ``calib apply`` adds to every row by default.
APPLY_FIELD = "calibrated"
#: Longest map table printed by ``calib fit`` (the JSON has every row).
MAX_TABLE_ROWS = 40


# ------------------------------------------------------------------ shared flags
def add_load_options(p: argparse.ArgumentParser) -> None:
    """Flags every subcommand that reads a file understands (calikit's names kept)."""
    g = p.add_argument_group("reading the file")
    g.add_argument("--rescale", metavar="LO,HI", help="the stated scale, e.g. 0,100 (default: detected)")
    g.add_argument("--mixed-scales", dest="mixed_scales", action="store_true",
                   help="the confidences mix probabilities and a larger scale (0.85 next to 85): read each by "
                        "its range, up to 1 a probability, above 1 on the detected scale (default: refuse)")
    g.add_argument("--prob-key", "--confidence-key", dest="confidence_key", metavar="K",
                   help="field holding the stated confidence (default: detected); for Inspect logs "
                        "'logprob' uses the answer letter's token probability, 'stated|logprob' falls back to it")
    g.add_argument("--label-key", "--outcome-key", dest="outcome_key", metavar="K",
                   help="field holding the outcome, right/wrong (default: detected); for Inspect logs, the scorer")
    g.add_argument("--pred-key", dest="pred_key", metavar="K",
                   help="field holding the answer given, compared with --gold-key when there is no outcome field")
    g.add_argument("--gold-key", dest="gold_key", metavar="K", help="field holding the right answer")
    g.add_argument("--group-key", dest="group_key", metavar="K",
                   help="field to audit by group, e.g. subject or model")
    g.add_argument("--id-key", dest="id_key", metavar="K", help="field holding the item id (default: detected)")
    g.add_argument("--cluster-key", dest="cluster_key", metavar="K",
                   help="field grouping dependent rows (the same item judged several times): intervals resample "
                        "these clusters and the tests allow for them (default: Inspect epochs and ids on several "
                        "rows are clusters; 'none' treats rows as independent)")
    g.add_argument("--variant", choices=("acc", "acc_norm"), default="acc",
                   help="lm-evaluation-harness samples: score as acc or acc_norm (default acc)")
    g.add_argument("--normalisation", "--normalization", dest="normalisation",
                   choices=("none", "char", "byte", "token"), default="none",
                   help="option log-probs: divide each option's log-prob by its length in characters, bytes "
                        "or tokens (default none; --variant acc_norm implies char)")
    g.add_argument("--strict", action="store_true", help="fail on the first bad line instead of reporting it")


def load_options(args: argparse.Namespace) -> LoadOptions:
    """:class:`~calib.loading.LoadOptions` from the flags of :func:`add_load_options`, under
    the same limits as the dashboard (``CALIB_MAX_ROWS``, ``CALIB_MAX_DECOMPRESSED_MB``…,
    :meth:`calib.limits.Limits.from_env`), so that one variable raises a cap everywhere."""
    from calib.limits import Limits
    from calib.loading import LoadOptions
    from calib.scale import parse_rescale

    extra = {k: v for k, v in (("pred_key", getattr(args, "pred_key", None)),
                               ("gold_key", getattr(args, "gold_key", None))) if v}
    return Limits.from_env().load_options(LoadOptions(
        confidence_key=args.confidence_key, outcome_key=args.outcome_key, group_key=args.group_key,
        id_key=getattr(args, "id_key", None), cluster_key=getattr(args, "cluster_key", None),
        rescale=parse_rescale(args.rescale) if args.rescale else None,
        mixed_scales=bool(getattr(args, "mixed_scales", False)), strict=bool(args.strict),
        normalisation=getattr(args, "normalisation", "none") or "none", variant=getattr(args, "variant", "acc"),
        extra=extra,
    ))


def add_stats_options(p: argparse.ArgumentParser, *, bins_help: str, reps_help: str = "") -> None:
    """Binning, bootstrap and interval flags (``--scheme --bins --reps --seed --level``)."""
    g = p.add_argument_group("figures and intervals")
    g.add_argument("--scheme", choices=("auto", "values", "width", "mass"), default="auto",
                   help="ECE bins: one per stated value, equal width or equal mass (default: values for a stated "
                        "scale, at most 101 distinct values used 20 times each on average, else width)")
    g.add_argument("--bins", type=_positive_int, default=10, metavar="N", help=bins_help)
    g.add_argument("--reps", type=_positive_int, default=2000, metavar="N",
                   help=reps_help or "bootstrap resamples, 0 for none (default 2000)")
    g.add_argument("--seed", type=_positive_int, default=0, metavar="S", help="bootstrap seed (default 0)")
    g.add_argument("--level", type=_number, default=0.95, metavar="L", help="interval level (default 0.95)")


def add_json_option(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print one JSON object (keys documented in the README)")
    return o


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return v


def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def _check_level(args: argparse.Namespace) -> None:
    level = getattr(args, "level", None)
    if level is not None and not 0 < level < 1:
        raise CalibError(f"--level: the interval level must be between 0 and 1 (e.g. 0.95), got {level:g}")


def _load(path: str, args: argparse.Namespace, *, name: str | None = None) -> Dataset:
    """Load one file or folder with the shared flags; refuse one with no usable rows."""
    from calib.loading import load

    ds = load(path, name=name, options=load_options(args))
    warn_load(ds)
    if ds.table.total == 0:
        raise CalibError(f"{path}: nothing to use: {ds.report.summary()}")
    return ds


def warn_load(ds: Dataset) -> None:
    """Print the load report's warnings (an option that contradicts the data, such as
    ``--rescale 0,100`` on values 1 to 9) on stderr; ``--json`` has them in its notes."""
    for w in ds.report.warnings:
        print(f"calib: warning: {w}", file=sys.stderr)


def _dumps(obj: Any) -> str:
    """Strict JSON: numpy numbers made plain, NaN and infinity made ``null``."""
    from calib.audit import plain

    # ASCII: a lone surrogate from the input (JSON allows "\ud800") is escaped, not a crash
    return json.dumps(plain(obj), indent=2, allow_nan=False, ensure_ascii=True)


def _emit_json(obj: Any) -> None:
    sys.stdout.write(_dumps(obj) + "\n")


# --------------------------------------------------------------- text helpers
def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{100 * x:.{digits}f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _ival(lo: float | None, hi: float | None, fmt: Callable[[float | None], str]) -> str:
    ok = lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi)
    return f"[{fmt(lo)}, {fmt(hi)}]" if ok else ""


def _columns(headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: Sequence[int] = (0,)) -> list[str]:
    """A plain-text table: columns padded to their widest cell; ``left`` columns left-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  " + "  ".join(c.ljust(w) if i in left else c.rjust(w)
                                for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(headers)] + [line(r) for r in rows]


def _load_lines(ds: Dataset) -> list[str]:
    r = ds.report
    out = [f"Loaded {r.source}: {r.summary()}."]
    if r.scale and r.scale.get("how"):
        out.append(f"Scale: {r.scale['how']}.")
    if ds.table.clusters is not None:  # dependent rows (calib.clusters)
        c = ds.table.clusters.to_dict()
        eff = "" if c["effective_n"] is None else f", effective n {c['effective_n']:,.0f} of {ds.table.total:,}"
        out.append(f"Clusters: {c['count']:,} ({c['how']}){eff}: intervals resample clusters.")
    out += [f"  {i.message()}" for i in r.issues[:5]]
    if r.dropped > 5:
        out.append(f"  ... {r.dropped - 5:,} more dropped lines (see --json load_report)")
    return out


def _stated(v: float) -> str:
    from calib.audit import fmt_value

    return fmt_value(float(v))


# ------------------------------------------------------------------- audit
def add_audit(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "audit", help="audit a file: scale use, per-value hit rates, ECE, Brier vs constant, tests",
        description="Audit the stated confidence in FILE (JSONL of judged items, .jsonl.gz, a count table "
                    "CSV/Parquet/JSON, option log-probs, lm-eval samples or an output folder, an Inspect log).",
    )
    p.add_argument("file", metavar="FILE")
    add_load_options(p)
    add_stats_options(p, bins_help="bins for width/mass (default 10)")
    p.add_argument("--below", type=_number, default=None, metavar="V",
                   help="report the share of answers stated below V (default: 80 on 0-100)")
    o = add_json_option(p)
    o.add_argument("--plot", metavar="PATH",
                   help="write the reliability diagram: .html (interactive, self-contained, works offline), "
                        ".png or .svg (need kaleido and a Chrome/Chromium)")
    o.add_argument("--fail-above-ece", type=_number, default=None, metavar="X",
                   help="exit with code 1 when the ECE is above X (for CI pipelines)")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    """``calib audit FILE``: print the audit, text or JSON; optionally write the diagram."""
    from calib.audit import audit
    from calib.loading import load
    from calib.report import render_text, to_json

    plot_fmt = _plot_format(args.plot) if args.plot else None
    ds = load(args.file, options=load_options(args))
    warn_load(ds)
    if ds.table.total == 0:
        raise CalibError(f"{args.file}: nothing to audit: {ds.report.summary()}")
    result = audit(
        ds.table, scheme=args.scheme, bins=args.bins, reps=args.reps, seed=args.seed, level=args.level,
        below=args.below, name=ds.name, load_report=ds.report,
    )
    if args.plot:
        assert plot_fmt is not None
        write_plot(result, ds, args.plot, plot_fmt)
    sys.stdout.write(to_json(result) + "\n" if args.json else render_text(result))
    if args.plot:
        msg = f"Reliability diagram written to {args.plot}"
        if args.json:
            print(f"calib: {msg}", file=sys.stderr)
        else:
            print(f"\n{msg}.")
    if args.fail_above_ece is not None and result.ece is not None and result.ece > args.fail_above_ece:
        print(f"calib: ECE {result.ece:.4f} is above --fail-above-ece {args.fail_above_ece:g}", file=sys.stderr)
        return EXIT_THRESHOLD
    return EXIT_OK


def _plot_format(path: str) -> str:
    """``html``, ``png`` or ``svg`` from the path's extension (checked before the audit runs)."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext in ("html", "htm"):
        return "html"
    if ext in ("png", "svg"):
        return ext
    raise CalibError(f"--plot {path}: the file name must end in .html, .png or .svg")


def write_plot(result: Audit, ds: Dataset, path: str, fmt: str) -> None:
    """Write the reliability diagram of an audit: per-value points (binned points for a
    pooled table or width/mass bins) and the CORP curve with its bands
    (:mod:`calib.curves`), laid out by :func:`calib.figures.reliability_one`."""
    from calib import curves, figures

    t = ds.table
    if result.scheme == "values" and not t.pooled:
        points: Any = curves.value_points(t, level=result.level)
    else:
        points = curves.binned_points(t, scheme="width" if result.scheme == "values" else result.scheme,
                                      bins=result.bins, level=result.level)
    corp = curves.isotonic_curve(t, reps=result.reps, seed=result.seed, level=result.level)
    fig = figures.reliability_one(ds.name, points, corp)
    if fmt != "html":
        figures.write_image(fig, path, fmt)
        return
    from calib import html_report as hr

    bands = (f"Bands: {100 * result.level:g}% pointwise, {result.reps:,} resamples (seed {result.seed})."
             if result.reps else "No bands (--reps 0).")
    blocks = [hr.Paragraph(s) for s in result.verdict]
    blocks.append(hr.Figure(fig, dict(figures.CONFIG)))
    blocks.append(hr.Paragraph(
        "Points: hit rate at each stated value (or bin) with Wilson intervals, area growing with the number of "
        "answers. Line: the CORP isotonic curve (Dimitriadis, Gneiting & Jordan 2021) with its bootstrap "
        "confidence band (its colour) and the consistency band (grey: where a calibrated forecaster's curve "
        f"would fall). {bands}", kind="meta"))
    page = hr.render(f"Reliability diagram: {ds.name}", blocks,
                     subtitle=f"{ds.report.source}: {ds.report.summary()}")
    try:
        Path(path).write_text(page, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise CalibError(f"--plot {path}: cannot write the file ({exc.strerror or exc})") from None


# --------------------------------------------------------------------- fit
def add_fit(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "fit", help="fit a recalibration map and score it on held-out data",
        description="Fit a recalibration map on FILE and score it honestly: on --eval FILE, on an odd/even "
                    "split of FILE (the default) or by k-fold cross-fitting. On option log-probs and lm-eval "
                    "files, --method temperature fits the softmax temperature over the options (Guo et al. 2017).",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--method", required=True, choices=METHODS, help="the map")
    p.add_argument("--eval", dest="eval_file", metavar="FILE", help="score the map on this file")
    p.add_argument("--scoring", choices=("insample", "oddeven", "kfold", "file"), default=None,
                   help="how the map is scored (default: file with --eval, else oddeven)")
    p.add_argument("--folds", type=_positive_int, default=5, metavar="K", help="folds of kfold (default 5)")
    p.add_argument("--hist-scheme", choices=("mass", "width"), default="mass",
                   help="histogram binning: equal-mass or equal-width bins (default mass)")
    p.add_argument("--correction", type=_number, default=None, metavar="C",
                   help="continuity correction constant for stated 0 and 100 (default 0.5)")
    add_load_options(p)
    add_stats_options(p, bins_help="bins of width/mass ECE and of histogram binning (default 10)",
                      reps_help="bootstrap resamples of the evaluation data, 0 for none (default 2000)")
    o = add_json_option(p)
    o.add_argument("--out", metavar="MAP.json", help="write the map (the base rate when the fit is useless)")
    p.set_defaults(func=cmd_fit)


def cmd_fit(args: argparse.Namespace) -> int:
    """``calib fit FILE --method M``: the map, its before/after figures, optionally saved."""
    from calib.maps import CORRECTION, fit, write_map

    scoring = args.scoring
    if args.eval_file and scoring not in (None, "file"):
        raise CalibError(f"--eval scores the map on that file; it cannot be combined with --scoring {scoring}")
    if scoring == "file" and not args.eval_file:
        raise CalibError("--scoring file needs the evaluation file: --eval FILE")
    if scoring == "kfold" and args.folds < 2:
        raise CalibError(f"--folds: k-fold cross-fitting needs at least 2 folds, got {args.folds}")
    if args.out:
        _check_writable(args.out, "--out")
    ds = _load(args.file, args)
    ev = _load(args.eval_file, args) if args.eval_file else None
    result = fit(
        ds, args.method, scoring=scoring, eval_data=ev, folds=args.folds, seed=args.seed, reps=args.reps,
        level=args.level, correction=CORRECTION if args.correction is None else args.correction,
        bins=args.bins, hist_scheme=args.hist_scheme, ece_scheme=args.scheme, ece_bins=args.bins,
    )
    if args.out:
        try:
            write_map(result.map, args.out)
        except OSError as exc:
            raise CalibError(f"--out {args.out}: cannot write the map ({exc.strerror or exc})") from None
    if args.json:
        d = result.to_dict()
        d = {"schema": "calib.fit/1", "name": ds.name, **d, "out": args.out,
             "load_report": ds.report.to_dict(), "eval_load_report": ev.report.to_dict() if ev else None}
        _emit_json(d)
    else:
        sys.stdout.write("\n".join(_fit_text(result, ds, ev, args.out)) + "\n")
    return EXIT_OK


def _check_writable(path: str, flag: str) -> None:
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise CalibError(f"{flag} {path}: the folder {parent} does not exist")
    if Path(path).is_dir():
        raise CalibError(f"{flag} {path}: is a folder, not a file name")


_SCORING_TEXT = {
    "insample": "scored in-sample, on the data it was fitted on (optimistic)",
    "oddeven": "fitted on one half of the data and scored on the other (odd/even split, see the notes)",
    "kfold": "scored by {folds}-fold cross-fitting, each row by a map fitted without it",
    "file": "scored on {eval}",
}


def map_formula(cmap: CalibrationMap) -> str:
    """The map in one line: its formula and parameters."""
    prm, m = cmap.params, cmap.method
    f = f"f(s) = stated probability with the continuity correction c = {cmap.correction:g}"
    if cmap.steps is not None and cmap.scale.hi - cmap.scale.lo < 2:
        f += f" in steps of {1 / cmap.steps:g}"  # on 0-1, the resolution of the fitting data
    if m == "platt":
        return f"q = sigmoid({prm['slope']:.4g} logit f(s) + {prm['intercept']:.4g}); {f}"
    if m == "temperature":
        return f"q = sigmoid(logit f(s) / T), T = {prm['T']:.4g}; {f}"
    if m == "beta":
        return f"q = sigmoid({prm['a']:.4g} ln f(s) - {prm['b']:.4g} ln(1 - f(s)) + {prm['c']:.4g}); {f}"
    if m == "isotonic":
        return f"isotonic (PAV) fit through {len(prm['x'])} points, linear between them, flat beyond the ends"
    if m == "histogram":
        return f"histogram binning: the fitting data's hit rate in each of {len(prm['prob'])} bins"
    if m == "softmax_temperature":
        return (f"q = max_k softmax(l / T)_k over each item's option scores l, T = {prm['T']:.4g} "
                "(Guo et al. 2017)")
    return f"q = {prm['p']:.4f} for every stated value (the base rate)"


def _fit_text(result: FitResult, ds: Dataset, ev: Dataset | None, out: str | None) -> list[str]:
    how = _SCORING_TEXT[result.scoring].format(folds=result.folds, eval=ev.name if ev else "")
    method = "softmax temperature" if result.fitted.method == "softmax_temperature" else result.method
    title = f"Recalibration map: {method} on {ds.name}"
    lines = [title, "=" * len(title)]
    lines += _load_lines(ds)
    if ev is not None:
        lines += _load_lines(ev)
    lines += ["", f"The map was {how}: {result.n_fit:,} rows fitted, {result.n_eval:,} scored."]
    if result.useless:
        lines += ["", f"WARNING: the {method} map is useless: {result.reason}.",
                  f"  The map returned{' and written' if out else ''} is the base rate: "
                  f"{_pct(result.map.params['p'])} for every stated value."]
    level = f"{100 * result.level:g}%"
    scheme = {"values": "per value", "width": f"{result.ece_bins} equal-width bins",
              "mass": f"{result.ece_bins} equal-mass bins"}[result.ece_scheme]
    lines += ["", f"On the evaluation data ({level} intervals, {result.reps:,} resamples; lower is better)"
              if result.reps else "On the evaluation data (no intervals: --reps 0; lower is better)"]
    rows = []
    for key, label in (("brier", "Brier score"), ("log_loss", "Log loss"), ("ece", f"ECE ({scheme})")):
        cells = [label]
        for side in (result.before, result.after, result.base_rate, result.change):
            e = getattr(side, key)
            txt = _num(e.value) if side is not result.change else (
                "n/a" if not math.isfinite(e.value) else f"{e.value:+.3f}")
            iv = _ival(e.lo, e.hi, _num)
            cells.append(f"{txt} {iv}".rstrip())
        rows.append(cells)
    after = "base rate (returned)" if result.useless else "after the map"
    lines += _columns(["", "stated", after, "base rate", "change (after - stated)"], rows)
    lines += ["", "The map: " + map_formula(result.map)]
    if result.useless and result.fitted.method != "base_rate":
        lines.append(f"  (as fitted, not used: {map_formula(result.fitted)})")
    fit_note = result.fitted.note if result.fitted.note != result.reason else ""
    if fit_note:
        lines.append(f"  Note: {fit_note}.")
    if result.table:
        lines += ["", "Stated value -> calibrated probability"]
        tab = list(result.table)
        shown = tab
        if len(tab) > MAX_TABLE_ROWS:
            step = (len(tab) - 1) / (MAX_TABLE_ROWS - 1)
            shown = [tab[round(i * step)] for i in range(MAX_TABLE_ROWS)]
        rows = [[_stated(r["stated"]), _pct(r["prob"]), f"{r['n_fit']:,}", _pct(r["hit_rate_fit"]),
                 f"{r['n_eval']:,}", _pct(r["hit_rate_eval"])] for r in shown]
        lines += _columns(["stated", "calibrated", "n (fit)", "right (fit)", "n (eval)", "right (eval)"], rows,
                          left=())
        if len(tab) > len(shown):
            lines.append(f"  ({len(shown)} of {len(tab):,} stated values shown; --json lists all)")
    notes = [n for n in result.notes if n != fit_note]
    if notes:
        lines += ["", "Notes"] + [f"  - {n}" for n in notes]
    if out:
        lines += ["", f"Map written to {out} (apply it: calib apply {out} FILE --out OUT.jsonl)."]
    return lines


# ------------------------------------------------------------------- apply
def add_apply(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "apply", help="apply a saved map to a file: every valid row with its calibrated probability",
        description="Apply MAP.json (written by calib fit --out) to FILE and write every valid row to OUT with "
                    f"the calibrated probability (0-1) added in the field '{APPLY_FIELD}' (--field). JSONL "
                    "rows keep all their fields; other formats are written as "
                    "{line, id, group, stated, correct, calibrated}; a count table as one row per cell.",
    )
    p.add_argument("map", metavar="MAP.json")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--out", required=True, metavar="OUT.jsonl", help="output JSONL (.jsonl.gz to compress)")
    p.add_argument("--field", default=APPLY_FIELD, metavar="NAME",
                   help=f"name of the added field (default {APPLY_FIELD})")
    add_load_options(p)
    add_json_option(p)
    p.set_defaults(func=cmd_apply)


def cmd_apply(args: argparse.Namespace) -> int:
    """``calib apply MAP.json FILE --out OUT.jsonl``."""
    from calib.maps import read_map

    if not args.field.strip():
        raise CalibError("--field: the field name must not be empty")
    cmap = read_map(args.map)
    _check_writable(args.out, "--out")
    if Path(args.out).exists() and Path(args.file).exists() and Path(args.out).resolve() == Path(args.file).resolve():
        raise CalibError(f"--out {args.out}: is the input file; write the output to another file")
    ds = _load(args.file, args)
    records, mode = apply_records(cmap, ds, args.file, args.field, args.map)
    # a lone surrogate can only sit inside a JSON string, where backslashreplace writes
    # exactly its JSON escape (\ud800): the file stays valid UTF-8 and valid JSON
    body = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in records)
    body = body.encode("utf-8", "backslashreplace")
    try:
        if args.out.lower().endswith(".gz"):
            with gzip.open(args.out, "wb") as fh:
                fh.write(body)
        else:
            Path(args.out).write_bytes(body)
    except OSError as exc:
        raise CalibError(f"--out {args.out}: cannot write ({exc.strerror or exc})") from None
    summary = {
        "schema": "calib.apply/1", "map": {"file": args.map, "method": cmap.method, "replaces": cmap.replaces,
                                           "scale": {"lo": cmap.scale.lo, "hi": cmap.scale.hi,
                                                     "name": cmap.scale.name}},
        "input": args.file, "out": args.out, "field": args.field, "rows_written": len(records), "mode": mode,
        "dropped": ds.report.dropped, "load_report": ds.report.to_dict(),
    }
    if args.json:
        _emit_json(summary)
        return EXIT_OK
    what = {"original": "each row as read, with the field added",
            "rows": "one object per row: line, id, group, stated, correct and the field",
            "cells": "one object per cell of the count table: value, n, correct, group and the field"}[mode]
    lines = _load_lines(ds) + [
        f"Applied the {cmap.method} map ({cmap.scale.name} scale) from {args.map}.",
        f"Wrote {len(records):,} rows to {args.out}: {what}; the field \"{args.field}\" holds the calibrated "
        "probability (0-1).",
    ]
    if ds.report.dropped:
        lines.append(f"{ds.report.dropped:,} invalid lines of {args.file} are not in the output (listed above).")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def check_map_scale(cmap: CalibrationMap, ds: Dataset, map_path: str, what: str) -> None:
    """Refuse a map whose stated scale is not the data's, naming both files."""
    scale = ds.table.scale
    if (scale.lo, scale.hi) == (cmap.scale.lo, cmap.scale.hi):
        return
    if ds.rows is not None and ds.rows.options is not None:
        raise CalibError(
            f"{map_path}: the {cmap.method} map was fitted on stated values on the {cmap.scale.name} scale, but "
            f"{what} holds option log-probs (confidence = top softmax probability, 0-1); fit a map on a "
            "log-prob file (calib fit FILE --method temperature) to use with it"
        )
    try:
        cmap.check_scale(scale, what)
    except CalibError as exc:
        raise CalibError(f"{map_path}: {exc}") from None


def apply_records(
    cmap: CalibrationMap, ds: Dataset, path: str, field: str, map_path: str = "map"
) -> tuple[list[dict[str, Any]], str]:
    """The output rows of ``calib apply`` and how they were made.

    ``"original"``: for a JSONL file (stated confidences, option log-probs, lm-eval
    samples), the object on each valid row's line with ``field`` added;
    ``"rows"``: for other formats (Inspect logs, a folder), ``{line, id, group,
    stated, correct, field}`` per row; ``"cells"``: for a count table, one object
    per cell.
    """
    from calib.maps import cell_prob

    what = ds.report.source or path
    if ds.rows is None:  # a count table
        if cmap.method == "softmax_temperature":
            raise CalibError(f"{what}: a softmax temperature map needs option scores per item; "
                             "a count table has none")
        check_map_scale(cmap, ds, map_path, what)
        t = ds.table
        q = cmap.apply_prob(cell_prob(t))
        groups = t.groups
        recs = []
        for i in range(t.cells):
            r: dict[str, Any] = {"value": _plain_number(t.value[i]), "n": int(t.n[i]), "correct": int(t.correct[i])}
            if len(groups) > 1:
                r["group"] = groups[int(t.group[i])]
            r[field] = float(q[i])
            recs.append(r)
        return recs, "cells"
    rows = ds.rows
    if cmap.method != "softmax_temperature":
        check_map_scale(cmap, ds, map_path, what)
    elif rows.options is None:
        raise CalibError(f"{map_path}: the map is a softmax temperature over option log-probs, but {what} has "
                         "stated confidences, not option scores")
    q = cmap.apply_rows(rows).prob
    original = _original_objects(ds, path, rows.line)
    if original is not None:
        for obj, line, v in zip(original, rows.line, q, strict=True):
            if field in obj:
                raise CalibError(f"{what}: line {int(line)} already has a field {field!r}; "
                                 "name the output field with --field")
            obj[field] = float(v)
        return original, "original"
    recs = []
    for i in range(len(rows)):
        recs.append({
            "line": int(rows.line[i]), "id": str(rows.item_id[i]) if len(rows.item_id) else "",
            "group": None if rows.group is None else str(rows.group[i]),
            "stated": _plain_number(rows.stated[i]), "correct": bool(rows.correct[i]), field: float(q[i]),
        })
    return recs, "rows"


def _plain_number(x: Any) -> float | int:
    v = float(x)
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def _original_objects(ds: Dataset, path: str, lines: Any) -> list[dict[str, Any]] | None:
    """Each row's JSON object from its line, or ``None`` when the file is not JSONL
    whose lines are the rows (a folder, an Inspect log, a JSON array)."""
    from calib.loading import read_source

    if ds.report.format not in ("stated", "logprobs", "lmeval") or Path(path).is_dir():
        return None
    data = read_source(path).data
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    raw = data.split(b"\n")
    out = []
    for line in lines:
        i = int(line) - 1
        if not 0 <= i < len(raw):
            return None
        try:
            obj = json.loads(raw[i])
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        out.append(obj)
    return out


# ----------------------------------------------------------------- compare
def add_compare(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "compare", help="several models side by side (one file each, or one file by --group-key)",
        description="One row per model: right %%, mean stated, share stated at or above --at, right when it "
                    "did, calibration error [CI], Brier vs the constant base rate.",
    )
    p.add_argument("files", metavar="FILE", nargs="+")
    p.add_argument("--names", metavar="A,B,C", help="model names, one per file (default: the file names)")
    p.add_argument("--at", type=_number, default=90.0, metavar="P",
                   help="the 'said P or more' columns: a percentage (90) or a probability (0.9) of the scale "
                        "(default 90)")
    add_load_options(p)
    add_stats_options(p, bins_help="bins for width/mass ECE (default 10)")
    o = add_json_option(p)
    o.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    """``calib compare FILE...``: the blog post's table."""
    from calib.compare import compare

    at = args.at / 100 if args.at > 1 else args.at
    if not 0 <= at <= 1:
        raise CalibError(f"--at: a percentage (90) or a probability (0.9), got {args.at:g}")
    names: list[str] | None = None
    if args.names is not None:
        names = [n.strip() for n in args.names.split(",")]
        if len(names) != len(args.files):
            raise CalibError(f"--names gives {len(names)} name(s) for {len(args.files)} file(s)")
        if any(not n for n in names):
            raise CalibError("--names: a name is empty")
    datasets = [_load(f, args, name=names[i] if names else None) for i, f in enumerate(args.files)]
    models: dict[str, Any] = {}
    if len(datasets) == 1 and len(datasets[0].table.groups) > 1:
        t = datasets[0].table  # one file holding several models (--group-key model)
        models = {g: t.select(i) for i, g in enumerate(t.groups) if t.select(i).total > 0}
    else:
        for ds in datasets:
            name, k = ds.name, 2
            while name in models:  # two files with the same name
                name, k = f"{ds.name} ({k})", k + 1
            models[name] = ds.table
    cmp = compare(models, at=at, scheme=args.scheme, bins=args.bins, reps=args.reps, seed=args.seed,
                  level=args.level)
    if args.json:
        _emit_json({"schema": "calib.compare/1", **cmp.to_dict(),
                    "load_reports": [ds.report.to_dict() for ds in datasets]})
        return EXIT_OK
    if args.markdown:
        sys.stdout.write(cmp.to_markdown() + "\n")
        return EXIT_OK
    df = cmp.to_table()
    lines = []
    for ds in datasets:
        lines += _load_lines(ds)
    level = f"{100 * args.level:g}%"
    lines += ["", f"Calibration error: ECE with its {level} interval ({args.reps:,} resamples); Brier: stated "
                  "confidence vs the constant base rate (lower is better).", ""]
    lines += _columns(list(df.columns), [[str(v) for v in row] for row in df.itertuples(index=False)])
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


# ------------------------------------------------------------------- route
def add_route(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "route", help="what a review threshold does: sent to a person, accepted unseen, errors slipping",
        description="Items with a confidence below --threshold go to a person; at or above it (or --upper) "
                    "they are accepted unseen. With --map the threshold is on the calibrated probability (0-1).",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--threshold", type=_number, required=True, metavar="T",
                   help="review threshold on the stated scale (on the calibrated probability with --map)")
    p.add_argument("--upper", type=_number, default=None, metavar="U",
                   help="upper threshold: accept unseen only at or above U; [T, U) is a middle band")
    p.add_argument("--target-error", type=_number, default=None, metavar="E",
                   help="find the lowest threshold whose accepted items are wrong at most this often (0-1)")
    p.add_argument("--bound", choices=("point", "wilson"), default="point",
                   help="--target-error on the observed error rate or its one-sided upper Wilson bound at "
                        "--level (default point)")
    p.add_argument("--map", metavar="MAP.json", help="threshold on the calibrated probability of this map")
    p.add_argument("--cost-review", type=_number, default=None, metavar="C", help="cost of one review")
    p.add_argument("--cost-miss", type=_number, default=None, metavar="C",
                   help="cost of one error accepted unseen")
    add_load_options(p)
    g = p.add_argument_group("intervals")
    g.add_argument("--reps", type=_positive_int, default=2000, metavar="N",
                   help="bootstrap resamples, 0 for none (default 2000)")
    g.add_argument("--seed", type=_positive_int, default=0, metavar="S", help="bootstrap seed (default 0)")
    g.add_argument("--level", type=_number, default=0.95, metavar="L", help="interval level (default 0.95)")
    o = add_json_option(p)
    o.add_argument("--queue", metavar="OUT.csv", help="write the items a person must review (below T) as CSV")
    p.set_defaults(func=cmd_route)


def cmd_route(args: argparse.Namespace) -> int:
    """``calib route FILE --threshold T``."""
    from calib.maps import read_map
    from calib.routing import basis, lowest_threshold, queue_to_csv, review_queue, route, sweep

    cmap = read_map(args.map) if args.map else None
    if cmap is not None:
        for flag, v in (("--threshold", args.threshold), ("--upper", args.upper)):
            if v is not None and not 0 <= v <= 1:
                hint = f" (e.g. {v / 100:g} for {v:g}%)" if 1 < v <= 100 else ""
                raise CalibError(f"{flag} {v:g}: with --map the threshold is a calibrated probability between "
                                 f"0 and 1{hint}")
    if args.target_error is not None and not 0 <= args.target_error <= 1:
        raise CalibError(f"--target-error: an error rate between 0 and 1 (e.g. 0.05), got {args.target_error:g}")
    if args.queue:
        _check_writable(args.queue, "--queue")
    ds = _load(args.file, args)
    if args.queue and ds.rows is None:
        raise CalibError(f"--queue: {args.file} is a count table: it has no items to list for review")
    if cmap is not None:
        if cmap.method == "softmax_temperature":
            raise CalibError(f"{args.map}: a softmax temperature map rescales option scores; route on the "
                             "file it was fitted for by applying it first (calib apply) and routing the output")
        check_map_scale(cmap, ds, args.map, args.file)
    warnings = [] if cmap is not None else _threshold_warnings(ds, args)
    b = basis(ds.table, calibration=cmap, reps=args.reps, seed=args.seed)
    r = route(b, args.threshold, args.upper, cost_review=args.cost_review, cost_miss=args.cost_miss,
              level=args.level)
    sw = sweep(b, cost_review=args.cost_review, cost_miss=args.cost_miss, level=args.level)
    choice = (lowest_threshold(b, args.target_error, bound=args.bound, level=args.level)
              if args.target_error is not None else None)
    queued = None
    if args.queue:
        assert ds.rows is not None
        q = review_queue(ds.rows, args.threshold, calibration=cmap)
        try:
            Path(args.queue).write_bytes(queue_to_csv(q))
        except OSError as exc:
            raise CalibError(f"--queue {args.queue}: cannot write ({exc.strerror or exc})") from None
        queued = len(q)
    if args.json:
        _emit_json({
            "schema": "calib.route/1", "name": ds.name, "scale": ds.table.scale.to_dict(),
            "map": cmap.to_dict() if cmap is not None else None, **r.to_dict(), "reps": args.reps,
            "seed": args.seed, "target": choice.to_dict() if choice is not None else None,
            "sweep": sw.to_dict(), "queue": {"path": args.queue, "rows": queued} if args.queue else None,
            "warnings": list(ds.report.warnings) + warnings,
            "load_report": ds.report.to_dict(),
        })
        return EXIT_OK
    sys.stdout.write("\n".join(_route_text(r, choice, ds, cmap, args, queued)) + "\n")
    return EXIT_OK


def _threshold_warnings(ds: Dataset, args: argparse.Namespace) -> list[str]:
    """Thresholds on the stated scale checked against it (:func:`calib.scale.threshold_check`):
    one outside the scale is refused (exit 2), one beyond every stated value warned about."""
    from calib.scale import threshold_check

    t = ds.table
    values = ds.rows.stated if ds.rows is not None else t.value[t.n > 0]
    out = []
    for flag, v in (("--threshold", args.threshold), ("--upper", args.upper)):
        if v is None:
            continue
        check = threshold_check(values, t.scale, v, flag=flag)
        if check.refuse:
            raise CalibError(f"{check.message}; give a threshold on the {t.scale.name} scale")
        if check.message and flag == "--threshold":  # the wording is about the lower threshold
            print(f"calib: warning: {check.message}", file=sys.stderr)
            out.append(check.message)
    return out


def _route_text(r: Routing, choice: ThresholdChoice | None, ds: Dataset, cmap: CalibrationMap | None, args: argparse.Namespace,
                queued: int | None) -> list[str]:
    on = (f"the calibrated probability of the {cmap.method} map" if cmap is not None
          else f"the stated confidence ({ds.table.scale.name})")
    title = f"Routing {ds.name}: {r.total:,} items on {on}"
    lines = [title, "=" * len(title)] + _load_lines(ds)
    if r.upper is None:
        rule = f"below {r.lower:g} go to a person; at or above {r.lower:g} are accepted unseen."
    else:
        rule = (f"below {r.lower:g} go to a person; at or above {r.upper:g} are accepted unseen; "
                f"from {r.lower:g} up to {r.upper:g} is a middle band.")
    lines += ["", f"Items {rule}"]
    level = f"{100 * r.level:g}%"
    n = r.total

    def count(k: int) -> str:
        return f"{k:,} ({_pct(k / n if n else None)})"

    def ci(name: str, fmt: Callable[[float | None], str]) -> str:
        iv = r.ci.get(name)
        return _ival(iv.lo, iv.hi, fmt) if iv is not None else ""

    def fmt_count(x: float | None) -> str:
        return "n/a" if x is None else f"{x:,.0f}"

    rows = [["To a person", count(r.to_person), ci("to_person", fmt_count)]]
    if r.upper is not None:
        rows.append(["Middle band", count(r.middle), ""])
    rows += [
        ["Accepted unseen", count(r.accepted), ci("accepted", fmt_count)],
        ["Accuracy among accepted", _pct(r.accuracy_accepted), ci("accuracy_accepted", _pct)],
        ["Errors slipping through", f"{r.errors_slipping:,}", ci("errors_slipping", fmt_count)],
        ["Errors caught (sent to a person)", f"{r.errors_caught:,}", ci("errors_caught", fmt_count)],
        ["Right answers reviewed", f"{r.reviewed_needlessly:,}", ""],
    ]
    if r.cost_total is not None:
        rows.append(["Total cost", f"{r.cost_total:,.2f}", ci("cost_total", lambda x: _num(x, 2))])
    head = f"{level} interval ({args.reps:,} resamples)" if args.reps else ""
    lines += [""] + _columns(["", "count", head], rows)
    if choice is not None:
        lines += ["", f"Target error rate {_pct(choice.target)} among accepted items: "
                      + (choice.message if choice.threshold is not None else f"none does: {choice.message}") + "."]
    if queued is not None:
        lines += ["", f"Review queue: {queued:,} items written to {args.queue}."]
    return lines


# -------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    from calib import __version__

    parser = argparse.ArgumentParser(
        prog="calib", description="A calibration audit for models that state how sure they are.",
        epilog="Exit codes: 0 ok, 1 a --fail-above-* threshold exceeded, 2 unusable input or options, "
               "3 internal error (CALIB_DEBUG=1 shows the traceback).",
    )
    parser.add_argument("--version", action="version", version=f"calib {__version__}")
    # argparse exits with 2 (EXIT_INPUT) on a usage error
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_audit(sub)
    add_fit(sub)
    add_apply(sub)
    add_compare(sub)
    add_route(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        # input text reaches the output (ids, previews, file names): a lone surrogate or
        # an undecodable file name is printed escaped instead of ending the run
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_level(args)
        return int(args.func(args))
    except CalibError as exc:
        print(f"calib: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # output piped into head: not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print("calib: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so plainly, traceback only on request
        if os.environ.get("CALIB_DEBUG"):
            traceback.print_exc()
        print(f"calib: internal error ({type(exc).__name__}: {exc}); please report it "
              "(CALIB_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
