"""``calib route``: what a review threshold does (sent to a person, accepted unseen, errors
slipping through), the target-error search, costs and the review queue."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from calib.cli.args import (
    add_interval_options,
    add_json_option,
    add_load_options,
    check_writable,
    load_dataset,
    number,
)
from calib.cli.fit import check_map_scale
from calib.cli.output import EXIT_OK, columns, emit_json, load_lines
from calib.errors import CalibError
from calib.present.format import count, interval, num, pct
from calib.settings import ROUTE_BOUNDS

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.maps import CalibrationMap
    from calib.routing import Routing, ThresholdChoice


def add_route(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "route", help="what a review threshold does: sent to a person, accepted unseen, errors slipping",
        description="Items with a confidence below --threshold go to a person; at or above it (or --upper) "
                    "they are accepted unseen. With --map the threshold is on the calibrated probability (0-1).",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--threshold", type=number, required=True, metavar="T",
                   help="review threshold on the stated scale (on the calibrated probability with --map)")
    p.add_argument("--upper", type=number, default=None, metavar="U",
                   help="upper threshold: accept unseen only at or above U; [T, U) is a middle band")
    p.add_argument("--target-error", type=number, default=None, metavar="E",
                   help="find the lowest threshold whose accepted items are wrong at most this often (0-1)")
    p.add_argument("--bound", choices=ROUTE_BOUNDS, default="point",
                   help="--target-error on the observed error rate or its one-sided upper Wilson bound at "
                        "--level (default point)")
    p.add_argument("--map", metavar="MAP.json", help="threshold on the calibrated probability of this map")
    p.add_argument("--cost-review", type=number, default=None, metavar="C", help="cost of one review")
    p.add_argument("--cost-miss", type=number, default=None, metavar="C",
                   help="cost of one error accepted unseen")
    add_load_options(p)
    add_interval_options(p.add_argument_group("intervals"))
    o = add_json_option(p)
    o.add_argument("--queue", metavar="OUT.csv", help="write the items a person must review (below T) as CSV")
    p.set_defaults(func=cmd_route)


def _check_flags(args: argparse.Namespace, with_map: bool) -> None:
    """Refuse thresholds and a target the routing cannot use, before any file is read."""
    if with_map:
        for flag, v in (("--threshold", args.threshold), ("--upper", args.upper)):
            if v is not None and not 0 <= v <= 1:
                hint = f" (e.g. {v / 100:g} for {v:g}%)" if 1 < v <= 100 else ""
                raise CalibError(f"{flag} {v:g}: with --map the threshold is a calibrated probability between "
                                 f"0 and 1{hint}")
    if args.target_error is not None and not 0 <= args.target_error <= 1:
        raise CalibError(f"--target-error: an error rate between 0 and 1 (e.g. 0.05), got {args.target_error:g}")
    if args.queue:
        check_writable(args.queue, "--queue")


def _check_map(cmap: CalibrationMap, ds: Dataset, args: argparse.Namespace) -> None:
    """Refuse a map whose calibrated probability cannot be thresholded (the engine decides:
    :func:`calib.routing.threshold_refusal`) or whose scale is not the file's."""
    from calib.routing import threshold_refusal

    if threshold_refusal(cmap) is not None:
        raise CalibError(f"{args.map}: a softmax temperature map rescales option scores; route on the "
                         "file it was fitted for by applying it first (calib apply) and routing the output")
    check_map_scale(cmap, ds, args.map, args.file)


def _write_queue(ds: Dataset, args: argparse.Namespace, cmap: CalibrationMap | None) -> int:
    """Write the review queue (the rows below the threshold) as CSV; the number of rows."""
    from calib.routing import queue_to_csv, review_queue

    assert ds.rows is not None
    q = review_queue(ds.rows, args.threshold, calibration=cmap)
    try:
        Path(args.queue).write_bytes(queue_to_csv(q))
    except OSError as exc:
        raise CalibError(f"--queue {args.queue}: cannot write ({exc.strerror or exc})") from None
    return len(q)


def cmd_route(args: argparse.Namespace) -> int:
    """``calib route FILE --threshold T``."""
    from calib.maps import read_map
    from calib.routing import basis, lowest_threshold, route, sweep

    cmap = read_map(args.map) if args.map else None
    _check_flags(args, cmap is not None)
    ds = load_dataset(args.file, args)
    if args.queue and ds.rows is None:
        raise CalibError(f"--queue: {args.file} is a count table: it has no items to list for review")
    if cmap is not None:
        _check_map(cmap, ds, args)
    warnings = [] if cmap is not None else _threshold_warnings(ds, args)
    b = basis(ds.table, calibration=cmap, reps=args.reps, seed=args.seed)
    r = route(b, args.threshold, args.upper, cost_review=args.cost_review, cost_miss=args.cost_miss,
              level=args.level)
    sw = sweep(b, cost_review=args.cost_review, cost_miss=args.cost_miss, level=args.level)
    choice = (lowest_threshold(b, args.target_error, bound=args.bound, level=args.level)
              if args.target_error is not None else None)
    queued = _write_queue(ds, args, cmap) if args.queue else None
    if args.json:
        emit_json({
            "schema": "calib.route/1", "name": ds.name, "scale": ds.table.scale.to_dict(),
            "map": cmap.to_dict() if cmap is not None else None, **r.to_dict(), "reps": args.reps,
            "seed": args.seed, "target": choice.to_dict() if choice is not None else None,
            "sweep": sw.to_dict(), "queue": {"path": args.queue, "rows": queued} if args.queue else None,
            "warnings": list(ds.report.warnings) + warnings,
            "load_report": ds.report.to_dict(),
        })
        return EXIT_OK
    sys.stdout.write("\n".join(route_text(r, choice, ds, cmap, args, queued)) + "\n")
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


def route_text(r: Routing, choice: ThresholdChoice | None, ds: Dataset, cmap: CalibrationMap | None, args: argparse.Namespace,
                queued: int | None) -> list[str]:
    on = (f"the calibrated probability of the {cmap.method} map" if cmap is not None
          else f"the stated confidence ({ds.table.scale.name})")
    title = f"Routing {ds.name}: {r.total:,} items on {on}"
    lines = [title, "=" * len(title)] + load_lines(ds)
    if r.upper is None:
        rule = f"below {r.lower:g} go to a person; at or above {r.lower:g} are accepted unseen."
    else:
        rule = (f"below {r.lower:g} go to a person; at or above {r.upper:g} are accepted unseen; "
                f"from {r.lower:g} up to {r.upper:g} is a middle band.")
    lines += ["", f"Items {rule}"]
    level = f"{100 * r.level:g}%"
    n = r.total

    def share(k: int) -> str:
        return f"{k:,} ({pct(k / n if n else None)})"

    def ci(name: str, fmt: Callable[[float | None], str]) -> str:
        iv = r.ci.get(name)
        return interval(iv.lo, iv.hi, fmt) if iv is not None else ""

    rows = [["To a person", share(r.to_person), ci("to_person", count)]]
    if r.upper is not None:
        rows.append(["Middle band", share(r.middle), ""])
    rows += [
        ["Accepted unseen", share(r.accepted), ci("accepted", count)],
        ["Accuracy among accepted", pct(r.accuracy_accepted), ci("accuracy_accepted", pct)],
        ["Errors slipping through", f"{r.errors_slipping:,}", ci("errors_slipping", count)],
        ["Errors caught (sent to a person)", f"{r.errors_caught:,}", ci("errors_caught", count)],
        ["Right answers reviewed", f"{r.reviewed_needlessly:,}", ""],
    ]
    if r.cost_total is not None:
        rows.append(["Total cost", f"{r.cost_total:,.2f}", ci("cost_total", lambda x: num(x, 2))])
    head = f"{level} interval ({args.reps:,} resamples)" if args.reps else ""
    lines += [""] + columns(["", "count", head], rows)
    if choice is not None:
        lines += ["", f"Target error rate {pct(choice.target)} among accepted items: "
                      + (choice.message if choice.threshold is not None else f"none does: {choice.message}") + "."]
    if queued is not None:
        lines += ["", f"Review queue: {queued:,} items written to {args.queue}."]
    return lines


