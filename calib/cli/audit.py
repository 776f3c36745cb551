"""``calib audit`` (one file: the audit, its text or JSON, the reliability diagram) and
``calib compare`` (several models side by side)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from calib.cli.args import (
    add_json_option,
    add_load_options,
    add_stats_options,
    load_dataset,
    load_options,
    number,
    warn_load,
)
from calib.cli.output import EXIT_OK, EXIT_THRESHOLD, columns, emit_json, load_lines
from calib.errors import CalibError

if TYPE_CHECKING:
    from calib.audit import Audit
    from calib.dataset import Dataset
    from calib.table import CountTable


def add_audit(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "audit", help="audit a file: scale use, per-value hit rates, ECE, Brier vs constant, tests",
        description="Audit the stated confidence in FILE (JSONL of judged items, .jsonl.gz, a count table "
                    "CSV/Parquet/JSON, option log-probs, lm-eval samples or an output folder, an Inspect log).",
    )
    p.add_argument("file", metavar="FILE")
    add_load_options(p)
    add_stats_options(p, bins_help="bins for width/mass (default 10)")
    p.add_argument("--below", type=number, default=None, metavar="V",
                   help="report the share of answers stated below V (default: 80 on 0-100)")
    o = add_json_option(p)
    o.add_argument("--plot", metavar="PATH",
                   help="write the reliability diagram: .html (interactive, self-contained, works offline), "
                        ".png or .svg (need kaleido and a Chrome/Chromium)")
    o.add_argument("--fail-above-ece", type=number, default=None, metavar="X",
                   help="exit with code 1 when the ECE is above X (for CI pipelines)")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    """``calib audit FILE``: print the audit, text or JSON; optionally write the diagram."""
    from calib.audit import audit
    from calib.loading import load
    from calib.present.text_report import render_text, to_json

    plot_fmt = plot_format(args.plot) if args.plot else None
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


def plot_format(path: str) -> str:
    """``html``, ``png`` or ``svg`` from the path's extension (checked before the audit runs)."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext in ("html", "htm"):
        return "html"
    if ext in ("png", "svg"):
        return ext
    raise CalibError(f"--plot {path}: the file name must end in .html, .png or .svg")


def write_plot(result: Audit, ds: Dataset, path: str, fmt: str) -> None:
    """Write the reliability diagram of an audit (:mod:`calib.present.reliability_page`):
    an image, or the self-contained HTML page with the verdict."""
    from calib.present import figures
    from calib.present.reliability_page import reliability_figure, reliability_page

    fig = reliability_figure(result, ds)
    if fmt != "html":
        figures.write_image(fig, path, fmt)
        return
    page = reliability_page([(ds, result)], no_bands="No bands (--reps 0).", diagrams=[fig])
    try:
        Path(path).write_text(page, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise CalibError(f"--plot {path}: cannot write the file ({exc.strerror or exc})") from None


# ----------------------------------------------------------------- compare
def add_compare(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "compare", help="several models side by side (one file each, or one file by --group-key)",
        description="One row per model: right %%, mean stated, share stated at or above --at, right when it "
                    "did, calibration error [CI], Brier vs the constant base rate.",
    )
    p.add_argument("files", metavar="FILE", nargs="+")
    p.add_argument("--names", metavar="A,B,C", help="model names, one per file (default: the file names)")
    p.add_argument("--at", type=number, default=90.0, metavar="P",
                   help="the 'said P or more' columns: a percentage (90) or a probability (0.9) of the scale "
                        "(default 90)")
    add_load_options(p)
    add_stats_options(p, bins_help="bins for width/mass ECE (default 10)")
    o = add_json_option(p)
    o.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.set_defaults(func=cmd_compare)


def _names(args: argparse.Namespace) -> list[str] | None:
    if args.names is None:
        return None
    names = [n.strip() for n in args.names.split(",")]
    if len(names) != len(args.files):
        raise CalibError(f"--names gives {len(names)} name(s) for {len(args.files)} file(s)")
    if any(not n for n in names):
        raise CalibError("--names: a name is empty")
    return names


def _models(datasets: list[Dataset]) -> dict[str, CountTable]:
    """Name -> count table: the groups of one file holding several models (``--group-key
    model``), else one per file, a repeated name numbered."""
    if len(datasets) == 1 and len(datasets[0].table.groups) > 1:
        t = datasets[0].table
        return {g: t.select(i) for i, g in enumerate(t.groups) if t.select(i).total > 0}
    models: dict[str, CountTable] = {}
    for ds in datasets:
        name, k = ds.name, 2
        while name in models:  # two files with the same name
            name, k = f"{ds.name} ({k})", k + 1
        models[name] = ds.table
    return models


def cmd_compare(args: argparse.Namespace) -> int:
    """``calib compare FILE...``: the blog post's table."""
    from calib.compare import compare
    from calib.present.tables import comparison_markdown, comparison_table

    at = args.at / 100 if args.at > 1 else args.at
    if not 0 <= at <= 1:
        raise CalibError(f"--at: a percentage (90) or a probability (0.9), got {args.at:g}")
    names = _names(args)
    datasets = [load_dataset(f, args, name=names[i] if names else None) for i, f in enumerate(args.files)]
    cmp = compare(_models(datasets), at=at, scheme=args.scheme, bins=args.bins, reps=args.reps, seed=args.seed,
                  level=args.level)
    if args.json:
        emit_json({"schema": "calib.compare/1", **cmp.to_dict(),
                   "load_reports": [ds.report.to_dict() for ds in datasets]})
        return EXIT_OK
    if args.markdown:
        sys.stdout.write(comparison_markdown(cmp) + "\n")
        return EXIT_OK
    df = comparison_table(cmp)
    lines = []
    for ds in datasets:
        lines += load_lines(ds)
    level = f"{100 * args.level:g}%"
    lines += ["", f"Calibration error: ECE with its {level} interval ({args.reps:,} resamples); Brier: stated "
                  "confidence vs the constant base rate (lower is better).", ""]
    lines += columns(list(df.columns), [[str(v) for v in row] for row in df.itertuples(index=False)])
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
