"""``calib audit`` (one file: the audit, its text or JSON, the reliability diagram) and
``calib compare`` (several models side by side)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calib.cli.args import (
    add_decision_options,
    add_json_option,
    add_labels_options,
    add_load_options,
    add_stats_options,
    check_decision_flags,
    load_dataset,
    load_options,
    number,
    run_settings,
    warn_load,
)
from calib.cli.output import EXIT_OK, EXIT_THRESHOLD, columns, emit_json, load_lines
from calib.errors import CalibError

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.runs.audit import Audit
    from calib.runs.decide import Decision, JudgeComparison
    from calib.runs.labels import Label
    from calib.runs.settings import Settings
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
                        ".svg or .png (static, for a paper; drawn by matplotlib, no browser needed)")
    o.add_argument("--fail-above-ece", type=number, default=None, metavar="X",
                   help="exit with code 1 when the ECE is above X (for CI pipelines)")
    g = p.add_argument_group("the recommended threshold")
    g.add_argument("--target-error", type=number, default=None, metavar="A",
                   help="add the threshold decision (calib route's recommendation, costs and AURC) at this target "
                        "error rate among the items accepted unseen: after the verdict, and as 'decision' in --json")
    add_decision_options(g)
    add_labels_options(p)
    c = p.add_argument_group("calibration against a covariate")
    c.add_argument("--covariate", metavar="FIELD", default=None,
                   help="the calibration residual (right - stated) against this field of the JSONL rows (answer "
                        "length, position, language, model version): per segment, cluster-robust, Holm-corrected; "
                        "'covariate_calibration' in --json")
    p.set_defaults(func=cmd_audit)


def _covariate(ds: Dataset, args: argparse.Namespace) -> Any:
    """``--covariate FIELD``: :func:`calib.runs.audit.covariate` of the rows, or ``None``."""
    if args.covariate is None:
        return None
    from calib.readers.covariate import read_covariate
    from calib.runs.audit import covariate
    from calib.runs.settings import Settings

    values = read_covariate(args.file, ds.report.format, ds.rows, args.covariate, load_options(args))
    assert ds.rows is not None
    return covariate(ds.rows, values, args.covariate, Settings(level=args.level))


def cmd_audit(args: argparse.Namespace) -> int:
    """``calib audit FILE``: print the audit, text or JSON; optionally write the diagram."""
    from calib.loading import load
    from calib.runs.audit import audit

    plot_fmt = plot_format(args.plot) if args.plot else None  # an unusable path is refused before any work
    check_decision_flags(args)
    for flag, value in (("--labels-threshold", args.labels_threshold), ("--labels-dataset", args.labels_dataset)):
        if value is not None and not args.labels:
            raise CalibError(f"{flag} needs --labels LABELS (the reviewers' labels it applies to)")
    labels = read_labels_file(args.labels) if args.labels else None  # a bad labels file: before any work
    if args.covariate is not None and not args.covariate.strip():
        raise CalibError("--covariate: the field name must not be empty")
    ds = load(args.file, options=load_options(args))
    warn_load(ds)
    if ds.table.total == 0:
        raise CalibError(f"{args.file}: nothing to audit: {ds.report.summary()}")
    human: dict[str, Any] | None = None
    s = run_settings(args)
    if labels is not None:
        ds, human = with_labels(ds, labels, args, s)
    result = audit(ds, s)
    if args.plot:
        assert plot_fmt is not None
        write_plot(result, ds, args.plot, plot_fmt)
    dec = _audit_decision(ds, args, s)
    cov = _covariate(ds, args)
    if args.json:
        # emit_json writes what calib.present.text_report.to_json does; the text report's module
        # (and pandas, which its tables need) is not imported for --json
        out = result.to_dict() if dec is None else {**result.to_dict(), "decision": dec.to_dict()}
        if cov is not None:
            out["covariate_calibration"] = cov.to_dict()
        emit_json(out if human is None else {**out, "labels": human})
    else:
        from calib.present.text_report import render_text

        text = render_text(result, dec)
        if human is not None:
            # under the title: the outcomes are not the file's
            title, underline, rest = text.split("\n", 2)
            o = human["outcomes"]
            note = (f"Outcomes: the reviewers' labels for {o['labelled']:,} items ({o['changed']:,} changed), "
                    "the file's for the rest; see \"Reviewers' labels\" at the end.")
            text = "\n".join([title, underline, note, rest, *labels_lines(human)]) + "\n"
        if cov is not None:
            from calib.present.covariate import covariate_lines

            text += "\n".join(["", f"Calibration against {cov.field} ({cov.kind})", *covariate_lines(cov)]) + "\n"
        sys.stdout.write(text)
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


def _audit_decision(ds: Dataset, args: argparse.Namespace, s: Settings) -> Decision | None:
    """The threshold decision of ``calib audit --target-error`` (the dataset, clusters
    and all), else ``None``."""
    if args.target_error is None:
        return None
    from calib.runs.decide import decide

    return decide(ds, s)


# ----------------------------------------------------------------- --labels
#: Bad lines of a labels file named on stderr (all of them are in --json's labels.messages).
SHOW_BAD_LABELS = 5


def read_labels_file(path: str) -> tuple[tuple[Label, ...], tuple[str, ...]]:
    """The labels of ``--labels PATH`` and one message per bad line; a file with no
    usable label is refused, with its first messages."""
    from calib.limits import Limits
    from calib.runs.labels import read_any_labels

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CalibError(f"--labels {path}: cannot read the file ({exc.strerror or exc})") from None
    options = Limits.from_env().load_options()
    Limits.from_env().check_upload(path, len(data))
    labels, bad = read_any_labels(data, Path(path).name, options=options)  # a final-labels file too
    if not labels:
        why = "; ".join(bad[:SHOW_BAD_LABELS]) if bad else "the file is empty"
        raise CalibError(f"--labels {path}: no usable label ({why})")
    return labels, bad


def with_labels(
    ds: Dataset, read: tuple[tuple[Label, ...], tuple[str, ...]], args: argparse.Namespace, s: Settings
) -> tuple[Dataset, dict[str, Any]]:
    """The dataset with the reviewers' labels as outcomes, and the ``labels`` block of
    the output: how many labelled and changed, agreement with the file's outcomes, the
    audit sample's estimate of the error among the accepted at the threshold
    (:func:`calib.runs.labels.with_labels`)."""
    from calib.runs.labels import with_labels as run

    labels, bad = read
    if ds.rows is None:
        raise CalibError(f"--labels: {args.file} is a count table, which has no items to join labels to")
    names = sorted({lab.dataset for lab in labels})
    shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
    if args.labels_dataset is None and len(names) > 1:
        raise CalibError(f"--labels {args.labels}: the labels are of {len(names)} datasets ({shown}): "
                         "choose one with --labels-dataset")
    if args.labels_dataset is not None and args.labels_dataset not in names:
        raise CalibError(f"--labels-dataset {args.labels_dataset!r}: no label of that dataset in {args.labels} "
                         f"(its labels are of {shown})")
    for msg in bad[:SHOW_BAD_LABELS]:
        print(f"calib: warning: {msg}", file=sys.stderr)
    if len(bad) > SHOW_BAD_LABELS:
        print(f"calib: warning: ... {len(bad) - SHOW_BAD_LABELS:,} more bad lines in {args.labels} "
              "(--json labels.messages)", file=sys.stderr)
    source = "--labels-threshold" if args.labels_threshold is not None else "default review threshold"
    run_ = run(ds, labels, s, threshold=args.labels_threshold, dataset=args.labels_dataset)
    block = {
        "file": args.labels, "dataset": args.labels_dataset, "read": len(labels), "bad_lines": len(bad),
        "messages": list(bad), "threshold": run_.threshold, "threshold_source": source,
        "outcomes": run_.outcomes.to_dict(), "agreement": run_.agreement.to_dict(),
        "accepted_error": run_.accepted_error.to_dict(),
    }
    return run_.dataset, block


def labels_lines(block: dict[str, Any]) -> list[str]:
    """The text report's "Reviewers' labels" section (the engine's sentences)."""
    lines = ["Reviewers' labels", f"  - Read {block['read']:,} labels from {block['file']}"
             + (f" ({block['bad_lines']:,} bad line{'s' if block['bad_lines'] != 1 else ''}, see the warnings)."
                if block["bad_lines"] else ".")]
    lines.append(f"  - {block['outcomes']['sentence']} The audit above uses these outcomes.")
    lines.append(f"  - {block['agreement']['sentence']}")
    est = block["accepted_error"]
    lines.append(f"  - Threshold {block['threshold']:g} ({block['threshold_source']}). {est['sentence']}")
    if est["labelled"]:
        lines.append("    by stated value: " + "; ".join(
            f"{_values(s)}: {s['errors']}/{s['labelled']} wrong of {s['accepted']:,} accepted"
            for s in est["strata"]))
    return lines


def _values(s: dict[str, Any]) -> str:
    return f"{s['value']:g}" if s["value"] == s["upper"] else f"{s['value']:g}-{s['upper']:g}"


def plot_format(path: str) -> str:
    """``html``, ``png`` or ``svg`` from the path's extension, and a folder to write it in:
    both checked before the file is read and the audit runs."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext in ("html", "htm"):
        fmt = "html"
    elif ext in ("png", "svg"):
        fmt = ext
    else:
        raise CalibError(f"--plot {path}: the file name must end in .html, .png or .svg")
    folder = Path(path).parent
    if not folder.is_dir():
        raise CalibError(f"--plot {path}: cannot write the file (no folder {str(folder)!r})")
    if Path(path).is_dir():
        raise CalibError(f"--plot {path}: cannot write the file (it is a folder)")
    import os

    if not os.access(folder, os.W_OK):
        raise CalibError(f"--plot {path}: cannot write the file (the folder is not writable)")
    return fmt


def write_plot(result: Audit, ds: Dataset, path: str, fmt: str) -> None:
    """Write the reliability diagram of an audit: an SVG or PNG drawn by matplotlib
    (:mod:`calib.present.static`, no browser needed), or the self-contained interactive
    HTML page with the verdict (:mod:`calib.present.reliability_page`)."""
    if fmt != "html":
        from calib.present.static import reliability_diagram

        reliability_diagram(result, ds.table, name=ds.name).save(path, fmt)
        return
    from calib.present.reliability_page import reliability_page

    page = reliability_page([(ds, result)], no_bands="No bands (--reps 0).")
    try:
        Path(path).write_text(page, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise CalibError(f"--plot {path}: cannot write the file ({exc.strerror or exc})") from None


# ----------------------------------------------------------------- compare
def add_compare(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "compare", help="several models side by side (one file each, or one file by --group-key)",
        description="One row per model: right %, mean stated, share stated at or above --at, right when it "
                    "did, calibration error [CI], Brier vs the constant base rate.",
    )
    p.add_argument("files", metavar="FILE", nargs="+")
    p.add_argument("--names", metavar="A,B,C", help="model names, one per file (default: the file names)")
    p.add_argument("--at", type=number, default=90.0, metavar="P",
                   help="the 'said P or more' columns: a percentage (90) or a probability (0.9) of the scale "
                        "(default 90)")
    add_load_options(p)
    add_stats_options(p, bins_help="bins for width/mass ECE (default 10)")
    g = p.add_argument_group("the recommended threshold of each judge")
    g.add_argument("--target-error", type=number, default=None, metavar="A",
                   help="add per judge the recommended review threshold at this target error rate among the "
                        "items accepted unseen (strictly between 0 and 1), and a paired comparison of the "
                        "judges on their shared item ids")
    add_decision_options(g)
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
    return {name: ds.table for name, ds in _judges(datasets).items()}


def _judges(datasets: list[Dataset]) -> dict[str, Dataset]:
    """Name -> dataset, as :func:`_models` names them: a file's groups (their rows kept,
    so the paired comparison can match item ids), else one per file."""
    from dataclasses import replace

    if len(datasets) == 1 and len(datasets[0].table.groups) > 1:
        ds = datasets[0]
        t = ds.table
        out = {}
        for i, g in enumerate(t.groups):
            sub = t.select(i)
            if sub.total == 0:
                continue
            rows = None
            if ds.rows is not None and ds.rows.group is not None:
                rows = ds.rows.take(ds.rows.group == g)
            out[g] = replace(ds, name=g, table=sub, rows=rows)
        return out
    judges: dict[str, Dataset] = {}
    for ds in datasets:
        name, k = ds.name, 2
        while name in judges:  # two files with the same name
            name, k = f"{ds.name} ({k})", k + 1
        judges[name] = ds if name == ds.name else replace(ds, name=name)
    return judges


def cmd_compare(args: argparse.Namespace) -> int:
    """``calib compare FILE...``: the blog post's table; with ``--target-error`` each
    judge's recommended threshold beside it, and the paired comparison."""
    from calib.present.tables import comparison_table, markdown_table, with_decision_columns

    at = args.at / 100 if args.at > 1 else args.at
    if not 0 <= at <= 1:
        raise CalibError(f"--at: a percentage (90) or a probability (0.9), got {args.at:g}")
    check_decision_flags(args)
    names = _names(args)
    datasets = [load_dataset(f, args, name=names[i] if names else None) for i, f in enumerate(args.files)]
    from calib.runs.audit import compare
    from calib.runs.decide import compare_judges

    judges = _judges(datasets)
    s = run_settings(args)
    cmp = compare({n: ds.table for n, ds in judges.items()}, s, at=at)
    jc = compare_judges(list(judges.values()), s) if args.target_error is not None else None
    if args.json:
        extra = {} if jc is None else {**jc.to_dict(), "target_error": args.target_error,
                                       "confidence": args.confidence}
        emit_json({"schema": "calib.compare/1", **cmp.to_dict(), **extra,
                   "load_reports": [ds.report.to_dict() for ds in datasets]})
        return EXIT_OK
    df = comparison_table(cmp)
    if jc is not None:
        df = with_decision_columns(df, jc, with_costs=args.cost_review is not None or args.cost_miss is not None)
    if args.markdown:
        sys.stdout.write(markdown_table(df) + "\n")
        return EXIT_OK
    lines = []
    for ds in datasets:
        lines += load_lines(ds)
    level = f"{100 * args.level:g}%"
    lines += ["", f"Calibration error: ECE with its {level} interval ({args.reps:,} resamples); Brier: stated "
                  "confidence vs the constant base rate (lower is better).", ""]
    lines += columns(list(df.columns), [[str(v) for v in row] for row in df.itertuples(index=False)])
    if jc is not None:
        lines += _decision_notes(jc, args)
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _decision_notes(jc: JudgeComparison, args: argparse.Namespace) -> list[str]:
    """What the recommendation columns mean, then the paired comparisons."""
    from calib.present.decision import level_text, paired_lines

    lines = ["", f"Recommended threshold: the one accepting the most items unseen with, at "
                 f"{level_text(args.confidence)} confidence, at most {level_text(args.target_error)} of them wrong "
                 "(fixed-sequence Clopper-Pearson, Learn-then-Test); the bound is the one-sided upper bound of the "
                 "error among the accepted."]
    pairs = paired_lines(jc)
    if pairs:
        lines += ["", "Paired on shared item ids (each judge at its recommended threshold):"]
        lines += [f"  {p}" for p in pairs]
    elif len(jc.judges) > 1:
        lines += ["", "No paired comparison: the files share no item id."]
    return lines
