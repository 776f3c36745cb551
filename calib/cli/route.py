"""``calib route``: what a review threshold does (sent to a person, accepted unseen, errors
slipping through), the target-error search, costs and the review queue."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from calib.cli.args import (
    add_decision_options,
    add_interval_options,
    add_json_option,
    add_load_options,
    check_decision_flags,
    check_writable,
    load_dataset,
    number,
    run_settings,
)
from calib.cli.decisions import (
    add_decisions_options,
    check_decisions_flags,
    check_phrase_threshold,
    number_or_phrase,
    phrase_threshold,
    write_decisions,
)
from calib.cli.fit import check_map_scale
from calib.cli.output import EXIT_OK, EXIT_THRESHOLD, columns, emit_json, load_lines
from calib.errors import CalibError
from calib.present.format import pct
from calib.settings import DEFAULT_TARGET, FIXED_SEQUENCE, PROCEDURES, ROUTE_BOUNDS

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.runs.decide import Decision
    from calib.runs.maps import CalibrationMap
    from calib.runs.route import Basis, Routing, Sweep, ThresholdChoice
    from calib.runs.settings import Settings


def add_route(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "route", help="the recommended review threshold, its cost, and what a threshold does",
        description="Prints first the recommended review threshold: the one accepting the most items unseen "
                    "while, with --confidence, at most --target-error of them are wrong (fixed-sequence "
                    "Clopper-Pearson testing, Learn-then-Test; default target 5%, confidence 95%). Items "
                    "with a confidence below the threshold (--threshold, else the recommended one) go to a "
                    "person; at or above it (or --upper) they are accepted unseen. With --map the threshold "
                    "is on the calibrated probability (0-1).",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--threshold", type=number_or_phrase, default=None, metavar="T",
                   help="review threshold on the stated scale, a phrase on a scale of phrases (on the calibrated "
                        "probability with --map); "
                        "default: the recommended threshold")
    p.add_argument("--upper", type=number, default=None, metavar="U",
                   help="upper threshold: accept unseen only at or above U; [T, U) is a middle band")
    p.add_argument("--map", metavar="MAP.json", help="threshold on the calibrated probability of this map")
    add_decision_flags(p)
    add_load_options(p)
    add_interval_options(p.add_argument_group("intervals"))
    o = add_json_option(p)
    o.add_argument("--queue", metavar="OUT.csv", help="write the items a person must review (below T) as CSV")
    o.add_argument("--report", metavar="OUT.html",
                   help="write the decision as a self-contained HTML report (card, cost curve, risk-coverage, "
                        "per-group table, the routing at the threshold routed at)")
    add_decisions_options(o)
    o.add_argument("--fail-if-none", action="store_true",
                   help="exit 1 when no threshold qualifies at --target-error and --confidence (a CI gate)")
    add_two_stage_flags(p)
    p.set_defaults(func=cmd_route)


def add_two_stage_flags(p: argparse.ArgumentParser) -> None:
    """``--two-thresholds`` and ``--stability`` (issue 28): extra JSON keys and text sections."""
    t = p.add_argument_group("two thresholds and route stability")
    t.add_argument("--two-thresholds", action="store_true",
                   help="certify a lower threshold (to a person below) and an upper one (accepted unseen at or "
                        "above) together, the band between going to a second judge: at most --target-error wrong "
                        "among the accepted and at most --max-review-share of the items to a person (JSON key "
                        "'two_thresholds')")
    t.add_argument("--max-review-share", type=number, default=None, metavar="B",
                   help="--two-thresholds: the cap on the share of items sent to a person, strictly between 0 and 1")
    t.add_argument("--two-procedure", choices=("fixed-sequence", "bonferroni"), default="fixed-sequence",
                   help="--two-thresholds: two fixed sequences (default) or Bonferroni over the pair grid")
    t.add_argument("--stability", action="store_true",
                   help="items judged several times (epochs, repeated ids): how often the route flips at the "
                        "threshold, the spread of the stated confidence per item, and the threshold certified "
                        "with the item as the unit (JSON key 'stability')")


def add_decision_flags(p: argparse.ArgumentParser) -> None:
    """The recommendation, cost, capacity and per-group flags of ``calib route``."""
    g = p.add_argument_group("the recommended threshold")
    g.add_argument("--target-error", type=number, default=None, metavar="A",
                   help="target error rate alpha among the items accepted unseen, strictly between 0 and 1 "
                        f"(default {DEFAULT_TARGET:g})")
    add_decision_options(g, costs=False)
    g.add_argument("--procedure", choices=PROCEDURES, default=FIXED_SEQUENCE,
                   help="how the candidate thresholds are tested: fixed-sequence (default; from the top down, "
                        "the most powerful when the error falls as confidence rises) or fallback (Wiens' "
                        "fallback procedure over at most 10 thresholds fixed without outcomes: holds when a "
                        "higher value is wrong more often than a lower one); choose before seeing outcomes")
    g.add_argument("--point-estimate", action="store_true",
                   help="lead with (and route at) the point-estimate search, which has no guarantee")
    g.add_argument("--bound", choices=ROUTE_BOUNDS, default="point",
                   help="the JSON 'target' search (kept for scripts): the observed error rate or its "
                        "per-threshold upper Wilson bound at --level (default point); neither is a guarantee")
    c = p.add_argument_group("costs and capacity")
    c.add_argument("--cost-review", type=number, default=None, metavar="C", help="cost of one review")
    c.add_argument("--cost-miss", type=number, default=None, metavar="C",
                   help="cost of one error accepted unseen")
    c.add_argument("--capacity", metavar="K|P%",
                   help="at most K items (or P%% of the items) go to a person: the best threshold within it")
    s = p.add_argument_group("per group")
    s.add_argument("--by", metavar="GROUPKEY", default=None,
                   help="one threshold per group of this field (subject, task, source); a group its own items "
                        "cannot certify goes to a person")
    s.add_argument("--by-group", action="store_true", help="one threshold per group of --group-key")
    s.add_argument("--simultaneous", action="store_true",
                   help="per group: the guarantee holds for all groups at once (Bonferroni) instead of each")


def _check_flags(args: argparse.Namespace, with_map: bool) -> None:
    """Refuse thresholds and a target the routing cannot use, before any file is read."""
    check_phrase_threshold(args, with_map)
    if with_map:
        for flag, v in (("--threshold", args.threshold), ("--upper", args.upper)):
            if v is not None and not 0 <= v <= 1:
                hint = f" (e.g. {v / 100:g} for {v:g}%)" if 1 < v <= 100 else ""
                raise CalibError(f"{flag} {v:g}: with --map the threshold is a calibrated probability between "
                                 f"0 and 1{hint}")
    check_decision_flags(args)
    if args.two_thresholds and args.max_review_share is None:
        raise CalibError("--two-thresholds: give --max-review-share B, the cap on the share sent to a person")
    if args.max_review_share is not None and not 0 < args.max_review_share < 1:
        raise CalibError(f"--max-review-share: a share strictly between 0 and 1, got {args.max_review_share:g}")
    if args.two_thresholds and with_map:
        raise CalibError("--two-thresholds certifies thresholds on the stated scale: leave out --map")
    if args.by is not None:
        if not args.by.strip():
            raise CalibError("--by: give the name of the group field, e.g. --by subject")
        if args.group_key and args.group_key != args.by:
            raise CalibError(f"--by {args.by!r} and --group-key {args.group_key!r} name different fields: give one")
        args.group_key = args.by  # the loaders read groups from --group-key
    if args.capacity is not None:
        from calib.runs.decide import parse_capacity

        try:
            args.capacity_items, args.capacity_share = parse_capacity(args.capacity)
        except CalibError as exc:
            raise CalibError(f"--capacity: {exc}") from None
        if args.capacity_items is not None and args.capacity_items < 0:
            raise CalibError(f"--capacity: a number of items must not be negative, got {args.capacity}")
        if args.capacity_share is not None and not 0 <= args.capacity_share <= 1:
            raise CalibError(f"--capacity: a share must be between 0% and 100%, got {args.capacity}")
    else:
        args.capacity_items = args.capacity_share = None
    check_decisions_flags(args)
    if args.queue:
        check_writable(args.queue, "--queue")
    if args.report:
        check_writable(args.report, "--report")
        if not args.report.lower().endswith((".html", ".htm")):
            raise CalibError(f"--report {args.report}: the file name must end in .html")


def _check_map(cmap: CalibrationMap, ds: Dataset, args: argparse.Namespace) -> None:
    """Refuse a map whose calibrated probability cannot be thresholded (the engine decides:
    :func:`calib.routing.threshold_refusal`) or whose scale is not the file's."""
    from calib.runs.route import threshold_refusal

    if threshold_refusal(cmap) is not None:
        raise CalibError(f"{args.map}: a softmax temperature map rescales option scores; route on the "
                         "file it was fitted for by applying it first (calib apply) and routing the output")
    check_map_scale(cmap, ds, args.map, args.file)


def _write_queue(ds: Dataset, args: argparse.Namespace, cmap: CalibrationMap | None) -> int:
    """Write the review queue (the rows below the threshold) as CSV; the number of rows."""
    from calib.runs.route import queue_csv

    assert ds.rows is not None
    data, n = queue_csv(ds.rows, args.threshold, calibration=cmap)
    try:
        Path(args.queue).write_bytes(data)
    except OSError as exc:
        raise CalibError(f"--queue {args.queue}: cannot write ({exc.strerror or exc})") from None
    return n


def cmd_route(args: argparse.Namespace) -> int:
    """``calib route FILE [--threshold T] [--target-error A] ...``: the recommendation
    first, then what the threshold routed at does."""
    from calib.runs.maps import read_map
    from calib.runs.route import basis, route

    cmap = read_map(args.map) if args.map else None
    _check_flags(args, cmap is not None)
    ds = load_dataset(args.file, args)
    phrase_threshold(ds, args)
    if args.queue and ds.rows is None:
        raise CalibError(f"--queue: {args.file} is a count table: it has no items to list for review")
    if cmap is not None:
        _check_map(cmap, ds, args)
    s = run_settings(args)
    dec = _decide(ds, cmap, args, s)
    lead = dec.point_estimate if args.point_estimate else dec.recommendation
    b = basis(ds.table, s, calibration=cmap)
    routed_at = "threshold" if args.threshold is not None else (
        "point_estimate" if args.point_estimate else "recommendation")
    if args.threshold is None:  # route at the recommendation; nothing qualifies: review everything
        args.threshold = lead.threshold if lead.threshold is not None else _above_every_score(b)
    warnings = [] if cmap is not None or routed_at != "threshold" else _threshold_warnings(ds, args)
    run = route(b, s, args.threshold, args.upper, bound=args.bound)
    r, sw, choice = run.routing, run.sweep, run.choice
    queued = _write_queue(ds, args, cmap) if args.queue else None
    written = write_decisions(ds, dec, cmap, args, routed_at) if args.decisions else None
    code = EXIT_THRESHOLD if args.fail_if_none and not lead.holds else EXIT_OK
    if args.report:
        _write_report(dec, ds, b, r, args, sw)
    extra = _two_stage(ds, args, s)
    if args.json:
        emit_json({**{k: v.to_dict() for k, v in extra.items()},
            "schema": "calib.route/1", "name": ds.name, "scale": ds.table.scale.to_dict(),
            "map": cmap.to_dict() if cmap is not None else None, **r.to_dict(), "reps": args.reps,
            "seed": args.seed, "target": choice.to_dict() if choice is not None else None,
            "sweep": sw.to_dict(), "queue": {"path": args.queue, "rows": queued} if args.queue else None,
            "decisions": written,
            "warnings": list(ds.report.warnings) + warnings,
            "load_report": ds.report.to_dict(), **dec.to_dict(), "routed_at": routed_at,
            "recommendation_details": dec.recommendation.details(),
        })
        return code
    lines = route_text(r, choice, ds, cmap, args, queued, routed_at=routed_at, review_all=not lead.holds)
    if written is not None:
        lines += ["", f"Decisions: {written['rows']:,} items written to {args.decisions} ({args.decisions_format}): "
                      f"{written['person']:,} to a person, {written['accepted']:,} accepted unseen."]
    lines += _two_stage_lines(extra)
    sys.stdout.write("\n".join(_lead_lines(dec, ds, args) + [""] + lines) + "\n")
    return code


def _two_stage(ds: Dataset, args: argparse.Namespace, s: Settings) -> dict:
    """The two-threshold certificate and the route stability, when asked
    (:func:`calib.runs.decide.two_thresholds`, :func:`calib.runs.decide.stability`)."""
    from calib.runs.decide import stability, two_thresholds

    out = {}
    if args.two_thresholds:
        out["two_thresholds"] = two_thresholds(ds, s, max_review_share=args.max_review_share,
                                               procedure=args.two_procedure)
    if args.stability:
        if ds.rows is None:
            raise CalibError(f"--stability: {args.file} is a count table: it has no items to follow")
        out["stability"] = stability(ds.rows, s, args.threshold)
    return out


def _two_stage_lines(extra: dict) -> list[str]:
    from calib.present.two_stage import stability_lines, two_threshold_lines

    out: list[str] = []
    if "two_thresholds" in extra:
        out += [""] + two_threshold_lines(extra["two_thresholds"])
    if "stability" in extra:
        out += [""] + stability_lines(extra["stability"])
    return out


def _decide(ds: Dataset, cmap: CalibrationMap | None, args: argparse.Namespace, s: Settings) -> Decision:
    """The threshold decision on the dataset (its clusters included), a clear message
    naming the flag when the data cannot give what was asked."""
    from calib.readers.stated import MISSING_GROUP
    from calib.runs.decide import decide

    groups = ds.table.groups
    if s.by_group and (len(groups) < 2 and (not groups[0] or groups[0] == MISSING_GROUP)):
        flag = f"--by {args.by}" if args.by is not None else "--by-group"
        key = args.by or args.group_key
        what = f"no line has the field {key!r}" if key else "no group field (give --by FIELD or --group-key)"
        raise CalibError(f"{flag}: {args.file}: {what}; per-group thresholds need a group field such as "
                         "subject, task or source")
    try:
        return decide(ds, s, calibration=cmap)
    except CalibError as exc:
        if "capacity" in str(exc):
            raise CalibError(f"--capacity {args.capacity}: {exc}") from None
        raise


def _write_report(dec: Decision, ds: Dataset, b: Basis, r: Routing, args: argparse.Namespace, sw: Sweep) -> None:
    """The HTML report of the decision (:func:`calib.present.html_report.decision_report`)."""
    import pandas as pd

    from calib.present import html_report as hr
    from calib.present.decision_figures import cost_curve_figure, risk_coverage_figure
    from calib.present.figures import CONFIG, PALETTE, scale_label

    lead = dec.point_estimate if args.point_estimate else dec.recommendation
    unit = "calibrated probability" if b.on == "calibrated" else scale_label(ds.table)
    cost_fig = (cost_curve_figure(dec.costs, name=ds.name, unit=unit, recommended=lead.threshold)
                if dec.costs.cheapest is not None else None)
    risk_fig = risk_coverage_figure(ds.name, PALETTE[0], sw, aurc=dec.aurc, recommendation=lead,
                                    coverage=r.coverage, risk=r.risk, threshold_text=f"accept at or above {r.lower:g}")
    from calib.present.routing_table import routing_rows

    routing = pd.DataFrame([{"": row.label, "value": row.text, f"{100 * r.level:g}% interval": row.interval()}
                            for row in routing_rows(r)])
    extra = [hr.Heading(f"Routing at {r.lower:g}", level=3), hr.Table(routing)]
    page = hr.decision_report(ds.name, dec, scale=ds.table.scale, cost_figure=cost_fig, risk_figure=risk_fig,
                              point=args.point_estimate, extra=extra, config=CONFIG,
                              settings=f"{ds.report.source}: {ds.report.summary()}; {args.reps:,} resamples, "
                                       f"seed {args.seed}, {100 * args.level:g}% intervals")
    try:
        Path(args.report).write_text(page, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise CalibError(f"--report {args.report}: cannot write the file ({exc.strerror or exc})") from None


def _above_every_score(b: Basis) -> float:
    """A threshold just above the highest score: every item goes to a person."""
    import numpy as np

    return float(np.nextafter(float(b.score[-1]), np.inf)) if b.score.size else 1.0


def _lead_lines(dec: Decision, ds: Dataset, args: argparse.Namespace) -> list[str]:
    from calib.present.decision import decision_lines

    lines = decision_lines(dec, scale=ds.table.scale, point=args.point_estimate)
    if args.target_error is None:
        lines.insert(1, f"  (the default target, {100 * DEFAULT_TARGET:g}%; set it with --target-error)")
    return lines


def _threshold_warnings(ds: Dataset, args: argparse.Namespace) -> list[str]:
    """Thresholds on the stated scale checked against it (:func:`calib.scale.threshold_check`):
    one outside the scale is refused (exit 2), one beyond every stated value warned about."""
    from calib.scale import threshold_check  # a foundation: the stated scale's own check

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


def route_text(r: Routing, choice: ThresholdChoice | None, ds: Dataset, cmap: CalibrationMap | None,
               args: argparse.Namespace, queued: int | None, *, routed_at: str = "threshold",
               review_all: bool = False) -> list[str]:
    from calib.present.explain import routing_small_sample

    on = (f"the calibrated probability of the {cmap.method} map" if cmap is not None
          else f"the stated confidence ({ds.table.scale.name})")
    title = f"Routing {ds.name}: {r.total:,} items on {on}"
    lines = [title, "=" * len(title)] + load_lines(ds)
    if routed_at != "threshold" and review_all:
        rule = "go to a person, every one: no threshold qualifies (give --threshold to see one)."
    elif r.upper is None:
        rule = f"below {r.lower:g} go to a person; at or above {r.lower:g} are accepted unseen."
    else:
        rule = (f"below {r.lower:g} go to a person; at or above {r.upper:g} are accepted unseen; "
                f"from {r.lower:g} up to {r.upper:g} is a middle band.")
    lines += ["", f"Items {rule}"]
    if routed_at != "threshold" and not review_all:
        which = "point-estimate" if routed_at == "point_estimate" else "recommended"
        lines.append(f"(routed at the {which} threshold; give --threshold to route at another)")
    level = f"{100 * r.level:g}%"
    n = r.total

    from calib.present.routing_table import routing_rows

    keys = ("to_person", "middle", "accepted", "accuracy_accepted", "errors_slipping", "errors_caught",
            "reviewed_needlessly", "cost_total")
    shares = {"to_person", "middle", "accepted"}  # counts with their share of all items
    rows = [[row.label, f"{row.text} ({pct(row.value / n if n else None)})" if row.key in shares else row.text,
             row.interval()] for row in routing_rows(r, keys)]
    head = f"{level} interval ({args.reps:,} resamples)" if args.reps else ""
    lines += [""] + columns(["", "count", head], rows)
    small = routing_small_sample(r)
    if small is not None:
        lines += ["", small]
    if choice is not None:
        lines += ["", f"Target error rate {pct(choice.target)} among accepted items, the --bound {args.bound} scan "
                      "(each threshold judged alone: no guarantee for the one it picks): "
                      + (choice.message if choice.threshold is not None else f"none does: {choice.message}") + "."]
    if queued is not None:
        lines += ["", f"Review queue: {queued:,} items written to {args.queue}."]
    return lines


