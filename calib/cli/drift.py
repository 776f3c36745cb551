"""``calib drift``: two runs of one judge compared (``OLD NEW``), or a list (or folder) of
runs followed over time with a control chart (``--series``). Exit codes for CI pipelines
(:func:`exit_code`): ``--fail-on-drift`` exits 1 when the judge changed (the drift test at
family-wise alpha, or a chart's alarm); ``--fail-on-uncertified`` exits 4 when the new run no
longer certifies the threshold (its bound above the target: not a test of change, an unchanged
judge near its target fails it often). Drift wins when both hold."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from calib.cli.args import (
    add_interval_options,
    add_json_option,
    add_load_options,
    check_decision_flags,
    load_dataset,
    number,
    positive_int,
    run_settings,
)
from calib.cli.output import EXIT_OK, EXIT_THRESHOLD, emit_json
from calib.errors import CalibError
from calib.settings import BINS, DEFAULT_CONFIDENCE, DRIFT_ORDERS

if TYPE_CHECKING:
    from calib.dataset import Dataset

#: Exit code of ``--fail-on-uncertified``: the new run does not certify the threshold (no drift found).
EXIT_UNCERTIFIED = 4
#: Exit code of ``--fail-on-drift``: the judge changed.
EXIT_DRIFT = EXIT_THRESHOLD

#: Files a folder of runs is read from (what calib recognises), in any case.
RUN_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".eval", ".csv", ".parquet")


def add_drift(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "drift",
        epilog=f"exit codes: {EXIT_OK} no failure asked for; {EXIT_DRIFT} the judge changed (--fail-on-drift); "
               f"{EXIT_UNCERTIFIED} the threshold is not certified on the new run, no drift "
               "(--fail-on-uncertified); 2 unusable input or options; 3 an internal error", help="drift between runs of the same judge: what moved, and is it real",
        description="calib drift OLD NEW compares two runs of one judge: accuracy, mean stated confidence, "
                    "calibration error, overconfidence and the hit rate of each stated value, with bootstrap "
                    "intervals of the differences and tests (paired by item id when both runs judged the same "
                    "items); the values that moved (Holm); whether --threshold still meets --target-error on "
                    "the new run. calib drift RUN1 RUN2 RUN3 ... --series (or a folder of runs) charts the runs "
                    "over time with an EWMA control limit and names the first run that crosses it.",
    )
    p.add_argument("files", nargs="+", metavar="RUN", help="OLD NEW, or with --series the runs (or one folder)")
    g = p.add_argument_group("drift")
    g.add_argument("--series", action="store_true", help="runs over time: per-run figures and an EWMA chart")
    pair = g.add_mutually_exclusive_group()
    pair.add_argument("--paired", dest="pairing", action="store_const", const="paired",
                      help="pair the runs by item id (refused when they share none); default: paired when "
                           "at least half the ids are shared")
    pair.add_argument("--unpaired", dest="pairing", action="store_const", const="unpaired",
                      help="compare the runs as independent samples")
    g.add_argument("--threshold", type=number, default=None, metavar="T",
                   help="review threshold on the stated scale: does the error among accepted still meet "
                        "--target-error on the new run (default with --target-error: the threshold recommended on "
                        "the old run)")
    g.add_argument("--target-error", type=number, default=None, metavar="A",
                   help="target error rate among the accepted items, strictly between 0 and 1")
    g.add_argument("--confidence", type=number, default=DEFAULT_CONFIDENCE, metavar="C",
                   help=f"confidence of the Clopper-Pearson bound (default {DEFAULT_CONFIDENCE:g})")
    g.add_argument("--scheme", choices=("auto", "values", "width"), default="auto",
                   help="ECE bins: one per stated value or equal width (default: as the audit would choose)")
    g.add_argument("--bins", type=positive_int, default=BINS, metavar="N", help=f"width bins (default {BINS})")
    g.add_argument("--order", choices=DRIFT_ORDERS, default="date",
                   help="--series: time order of the runs: a date in the file names (else modification time), "
                        "mtime, name, or as given (default date)")
    g.add_argument("--reference", type=positive_int, default=1, metavar="K",
                   help="--series: the first K runs are the chart's reference (default 1)")
    g.add_argument("--fail-on-drift", action="store_true",
                   help=f"exit {EXIT_DRIFT} when the judge changed: the drift test rejects at family-wise alpha "
                        "(1 - --level), or with --series a chart alarms (a CI gate)")
    g.add_argument("--fail-on-uncertified", action="store_true",
                   help=f"exit {EXIT_UNCERTIFIED} when the new run does not certify --threshold at --target-error "
                        "(its bound above the target) and no drift is found; not a test of change: an "
                        "unchanged judge whose error is near the target fails it often")
    g.add_argument("--answer-key", metavar="KEY", default=None,
                   help="field holding the system's answer (JSON Lines runs): who moved compares answers by "
                        "this text; default: an item whose outcome is unchanged is taken as the same answer")
    g.add_argument("--anchors", metavar="IDS.txt", default=None,
                   help="the anchor set: item ids kept across runs with fixed (human) labels, one per line; its "
                        "per-value hit rates then vs now test whether stated values still mean the same "
                        "(default: the shared items whose answer is unchanged)")
    add_load_options(p)
    add_interval_options(p.add_argument_group("intervals"))
    add_json_option(p)
    p.set_defaults(func=cmd_drift, pairing="auto")


def _run_paths(args: argparse.Namespace) -> list[str]:
    """The files to read: a single folder expands to its run files (``--series``)."""
    paths = list(args.files)
    for f in paths:
        if not Path(f).exists():
            raise CalibError(f"{f}: no such file or folder")
    if len(paths) == 1 and Path(paths[0]).is_dir():
        if not args.series:
            raise CalibError(f"{paths[0]}: a folder of runs needs --series (or give OLD NEW)")
        found = sorted(str(q) for q in Path(paths[0]).iterdir()
                       if q.is_file() and q.name.lower().endswith(RUN_SUFFIXES) and not q.name.startswith("."))
        if len(found) < 2:
            raise CalibError(f"{paths[0]}: a series needs at least two run files ({', '.join(RUN_SUFFIXES)}), "
                             f"found {len(found)}")
        return found
    if args.series and len(paths) < 2:
        raise CalibError("--series: give at least two runs, or one folder of runs")
    if not args.series and len(paths) != 2:
        raise CalibError(f"drift: give two runs, OLD NEW (got {len(paths)}); for three or more add --series")
    return paths


def _check(args: argparse.Namespace) -> None:
    check_decision_flags(args)
    if args.series and args.anchors is not None:
        raise CalibError("--anchors compares two runs (OLD NEW); --series charts each run on its own")
    if args.series and args.answer_key is not None:
        raise CalibError("--answer-key compares two runs (OLD NEW); --series charts each run on its own")
    if args.series and args.pairing != "auto":
        raise CalibError("--paired/--unpaired compare two runs; --series charts each run on its own")


def _names(paths: list[str]) -> list[str]:
    """Run names: file names, or the paths when two files share a name."""
    names = [Path(p).name for p in paths]
    return names if len(set(names)) == len(names) else list(paths)


def _load(paths: list[str], args: argparse.Namespace) -> list[Dataset]:
    return [load_dataset(p, args, name=n) for p, n in zip(paths, _names(paths), strict=True)]


def cmd_drift(args: argparse.Namespace) -> int:
    """``calib drift OLD NEW`` or ``calib drift RUN... --series``."""
    _check(args)
    paths = _run_paths(args)
    if args.series:
        return _series(paths, args)
    from calib.present.drift import drift_lines
    from calib.runs.drift import drift

    anchors = _anchor_ids(args.anchors) if args.anchors else None
    old, new = _load(paths, args)
    d = drift(old, new, run_settings(args), threshold=args.threshold, pairing=args.pairing,
              answers=_answers(paths, (old, new), args.answer_key), anchors=anchors)
    code, why = exit_code(d.drift, d.certified, args.fail_on_drift, args.fail_on_uncertified)
    if args.json:
        emit_json({**d.to_dict(), "files": paths, "exit_code": code, "exit_reason": why,
                   "warnings": list(old.report.warnings) + list(new.report.warnings)})
        return code
    sys.stdout.write("\n".join(drift_lines(d)) + "\n")
    return code


def _answers(paths: list[str], runs: tuple[Dataset, Dataset], key: str | None) -> tuple | None:
    """Each run's answer per row (``--answer-key``), or ``None``."""
    if key is None:
        return None
    from calib.runs.drift import answers_of

    if not key.strip():
        raise CalibError("--answer-key: give the name of the answer field, e.g. --answer-key prediction")
    for p, ds in zip(paths, runs, strict=True):
        if ds.rows is None:
            raise CalibError(f"--answer-key: {p} is a count table: it has no answers")
    return tuple(answers_of(p, ds.rows, key) for p, ds in zip(paths, runs, strict=True))  # type: ignore[arg-type]


#: Largest anchor file read (bytes): ids, one per line.
MAX_ANCHOR_BYTES = 64 * 1024 * 1024


def _anchor_ids(path: str) -> list[str]:
    """The anchor ids of ``--anchors`` (one per line, blank lines skipped), read under a size cap."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_ANCHOR_BYTES:
            raise CalibError(f"--anchors {path}: larger than {MAX_ANCHOR_BYTES // 2**20} MB; give one id per line")
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise CalibError(f"--anchors {path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise CalibError(f"--anchors {path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise CalibError(f"--anchors {path}: cannot read ({exc.strerror or exc})") from None
    ids = [x.strip() for x in text.splitlines() if x.strip()]
    if not ids:
        raise CalibError(f"--anchors {path}: no item id in the file (one per line)")
    return ids


def exit_code(changed: bool, certified: bool | None, fail_on_drift: bool,
              fail_on_uncertified: bool) -> tuple[int, str]:
    """The exit code and its reason: drift (the judge changed) first, then an uncertified threshold."""
    if fail_on_drift and changed:
        return EXIT_DRIFT, "drift: the judge changed"
    if fail_on_uncertified and certified is False:
        return EXIT_UNCERTIFIED, "the threshold is not certified on the new run (no drift found)"
    return EXIT_OK, "no failure asked for" if not (fail_on_drift or fail_on_uncertified) else "passed"


def _series(paths: list[str], args: argparse.Namespace) -> int:
    from calib.present.drift import series_lines
    from calib.runs.drift import order_runs, series

    ordered = order_runs(paths, args.order)
    s = series(_load(ordered, args), run_settings(args), threshold=args.threshold, reference=args.reference)
    code, why = exit_code(s.alarm is not None, None, args.fail_on_drift, args.fail_on_uncertified)
    if args.json:
        emit_json({**s.to_dict(), "files": ordered, "order": args.order, "exit_code": code, "exit_reason": why})
        return code
    sys.stdout.write("\n".join(series_lines(s)) + "\n")
    return code
