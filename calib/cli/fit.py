"""``calib fit`` (a recalibration map, scored honestly, optionally saved) and ``calib apply``
(a saved map applied to a new file)."""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calib.cli.args import (
    add_json_option,
    add_load_options,
    add_stats_options,
    check_writable,
    load_dataset,
    number,
    positive_int,
    run_settings,
)
from calib.cli.output import EXIT_OK, columns, emit_json, load_lines
from calib.errors import CalibError
from calib.present.format import interval, num, pct, signed, value
from calib.present.tables import map_formula
from calib.settings import HIST_SCHEMES, METHODS, SCORINGS

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.runs.maps import CalibrationMap, FitResult

#: Field ``calib apply`` adds to every row by default.
APPLY_FIELD = "calibrated"
#: Longest map table printed by ``calib fit`` (the JSON has every row).
MAX_TABLE_ROWS = 40


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
    p.add_argument("--scoring", choices=SCORINGS, default=None,
                   help="how the map is scored (default: file with --eval, else oddeven)")
    p.add_argument("--folds", type=positive_int, default=5, metavar="K", help="folds of kfold (default 5)")
    p.add_argument("--hist-scheme", choices=HIST_SCHEMES, default="mass",
                   help="histogram binning: equal-mass or equal-width bins (default mass)")
    p.add_argument("--correction", type=number, default=None, metavar="C",
                   help="continuity correction constant for stated 0 and 100 (default 0.5)")
    add_load_options(p)
    add_stats_options(p, bins_help="bins of width/mass ECE and of histogram binning (default 10)",
                      reps_help="bootstrap resamples of the evaluation data, 0 for none (default 2000)")
    o = add_json_option(p)
    o.add_argument("--out", metavar="MAP.json", help="write the map (the base rate when the fit is useless)")
    p.set_defaults(func=cmd_fit)


def _check_scoring(args: argparse.Namespace) -> None:
    scoring = args.scoring
    if args.eval_file and scoring not in (None, "file"):
        raise CalibError(f"--eval scores the map on that file; it cannot be combined with --scoring {scoring}")
    if scoring == "file" and not args.eval_file:
        raise CalibError("--scoring file needs the evaluation file: --eval FILE")
    if scoring == "kfold" and args.folds < 2:
        raise CalibError(f"--folds: k-fold cross-fitting needs at least 2 folds, got {args.folds}")


def cmd_fit(args: argparse.Namespace) -> int:
    """``calib fit FILE --method M``: the map, its before/after figures, optionally saved."""
    from calib.runs.maps import fit, write_map

    _check_scoring(args)
    if args.out:
        check_writable(args.out, "--out")
    ds = load_dataset(args.file, args)
    ev = load_dataset(args.eval_file, args) if args.eval_file else None
    result = fit(ds, run_settings(args), eval_data=ev, correction=args.correction)
    if args.out:
        try:
            write_map(result.map, args.out)
        except OSError as exc:
            raise CalibError(f"--out {args.out}: cannot write the map ({exc.strerror or exc})") from None
    if args.json:
        d = result.to_dict()
        d = {"schema": "calib.fit/1", "name": ds.name, **d, "out": args.out,
             "load_report": ds.report.to_dict(), "eval_load_report": ev.report.to_dict() if ev else None}
        emit_json(d)
    else:
        sys.stdout.write("\n".join(fit_text(result, ds, ev, args.out)) + "\n")
    return EXIT_OK


_SCORING_TEXT = {
    "insample": "scored in-sample, on the data it was fitted on (optimistic)",
    "oddeven": "fitted on one half of the data and scored on the other (odd/even split, see the notes)",
    "kfold": "scored by {folds}-fold cross-fitting, each row by a map fitted without it",
    "file": "scored on {eval}",
}


def fit_text(result: FitResult, ds: Dataset, ev: Dataset | None, out: str | None) -> list[str]:
    from calib.present.meanings import FIT_ECE_INTERVAL_TEXT

    how = _SCORING_TEXT[result.scoring].format(folds=result.folds, eval=ev.name if ev else "")
    method = "softmax temperature" if result.fitted.method == "softmax_temperature" else result.method
    title = f"Recalibration map: {method} on {ds.name}"
    lines = [title, "=" * len(title)]
    lines += load_lines(ds)
    if ev is not None:
        lines += load_lines(ev)
    lines += ["", f"The map was {how}: {result.n_fit:,} rows fitted, {result.n_eval:,} scored."]
    if result.useless:
        lines += ["", f"WARNING: the {method} map is useless: {result.reason}.",
                  f"  The map returned{' and written' if out else ''} is the base rate: "
                  f"{pct(result.map.params['p'])} for every stated value."]
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
            txt = num(e.value) if side is not result.change else signed(e.value)
            iv = interval(e.lo, e.hi)
            cells.append(f"{txt} {iv}".rstrip())
        rows.append(cells)
    after = "base rate (returned)" if result.useless else "after the map"
    lines += columns(["", "stated", after, "base rate", "change (after - stated)"], rows)
    if result.reps:
        lines += textwrap.wrap(FIT_ECE_INTERVAL_TEXT, 100, initial_indent="  ", subsequent_indent="  ")
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
        shown_as = result.map.scale.show if result.map.scale.labels else (lambda v: value(float(v)))
        rows = [[shown_as(float(r["stated"])), pct(r["prob"]), f"{r['n_fit']:,}", pct(r["hit_rate_fit"]),
                 f"{r['n_eval']:,}", pct(r["hit_rate_eval"])] for r in shown]
        lines += columns(["stated", "calibrated", "n (fit)", "right (fit)", "n (eval)", "right (eval)"], rows,
                          left=())
        if len(tab) > len(shown):
            lines.append(f"  ({len(shown)} of {len(tab):,} stated values shown; --json lists all)")
    notes = [n for n in result.notes if n != fit_note]
    if notes:
        lines += ["", "Notes"] + [f"  - {n}" for n in notes]
    if out:
        lines += ["", f"Map written to {out} (apply it: calib apply {out} FILE --out OUT.jsonl)."]
    return lines


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
    from calib.runs.maps import read_map

    if not args.field.strip():
        raise CalibError("--field: the field name must not be empty")
    cmap = read_map(args.map)
    check_writable(args.out, "--out")
    if Path(args.out).exists() and Path(args.file).exists() and Path(args.out).resolve() == Path(args.file).resolve():
        raise CalibError(f"--out {args.out}: is the input file; write the output to another file")
    ds = load_dataset(args.file, args)
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
        emit_json(summary)
        return EXIT_OK
    what = {"original": "each row as read, with the field added",
            "rows": "one object per row: line, id, group, stated, correct and the field",
            "cells": "one object per cell of the count table: value, n, correct, group and the field"}[mode]
    lines = load_lines(ds) + [
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
    from calib.runs.maps import cell_prob

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
    from calib.readers.source import read_source

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




def add_transport(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "transport", help="check a saved map on new labelled data: keep, refit or retire",
        description="Check MAP.json (written by calib fit --out) on NEW labelled data: a calibration test of the "
                    "mapped probabilities (cumulative differences, no bins), the map's Brier gain now and when "
                    "fitted, and the advice. Exit code 0: keep; 1: refit or retire; 2: bad input.",
    )
    p.add_argument("map", metavar="MAP.json")
    p.add_argument("file", metavar="NEW")
    add_load_options(p)
    g = p.add_argument_group("tests")
    g.add_argument("--seed", type=positive_int, default=0, metavar="S", help="Monte Carlo seed (default 0)")
    g.add_argument("--level", type=number, default=0.95, metavar="L",
                   help="1 - level is the advice's false-alarm rate, split over its two tests (default 0.95)")
    add_json_option(p)
    p.set_defaults(func=cmd_transport)


def cmd_transport(args: argparse.Namespace) -> int:
    """``calib transport MAP.json NEW``: the advice, as the exit code too."""
    from calib.present.transport import advice_sentence, transport_lines
    from calib.runs.maps import read_map, transport
    from calib.runs.settings import Settings

    cmap = read_map(args.map)
    ds = load_dataset(args.file, args)
    check_map_scale(cmap, ds, args.map, ds.report.source or args.file)
    t = transport(cmap, ds, Settings(level=args.level, seed=args.seed))
    if args.json:
        emit_json({**t.to_dict(), "sentence": advice_sentence(t), "map": args.map, "name": ds.name,
                   "load_report": ds.report.to_dict()})
    else:
        sys.stdout.write("\n".join(load_lines(ds) + transport_lines(t, args.map, ds.name)) + "\n")
    return t.exit_code
