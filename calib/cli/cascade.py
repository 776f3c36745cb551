"""``calib cascade``: several judges on shared items and the price of each call and of a person:
the cheapest chain (judge A -> judge B on doubt -> a person) certified for the error among the
items accepted at any stage, beside each judge alone (engine: :mod:`calib.decision.cascade`)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from calib.cli.args import (
    add_interval_options,
    add_json_option,
    add_load_options,
    load_dataset,
    number,
    run_settings,
)
from calib.cli.output import EXIT_OK, EXIT_THRESHOLD, emit_json
from calib.errors import CalibError
from calib.settings import DEFAULT_CONFIDENCE


def add_cascade(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "cascade", help="the cheapest certified chain of judges (A, then B on doubt, then a person)",
        description="Several judges' runs on the same items (matched by item id), the price of one call to "
                    "each (--prices, in the order of the files) and of one person's review (--person-price): "
                    "the cheapest chain with its thresholds for which, with --confidence, at most --target-error "
                    "of the items accepted at any stage are wrong (Learn-then-Test: the order learnt on a random "
                    "half, fixed-sequence binomial tests on the other), its cost per 1,000 items with an interval, "
                    "and each judge alone.",
    )
    p.add_argument("files", nargs="+", metavar="RUN", help="one run per judge")
    g = p.add_argument_group("cascade")
    g.add_argument("--names", metavar="A,B,C", help="judge names, one per file (default: the file names)")
    g.add_argument("--prices", required=True, metavar="P1,P2,...", help="price of one call to each judge")
    g.add_argument("--person-price", type=number, required=True, metavar="C", help="price of one person's review")
    g.add_argument("--target-error", type=number, required=True, metavar="A",
                   help="target error among the items accepted at any stage, strictly between 0 and 1")
    g.add_argument("--confidence", type=number, default=DEFAULT_CONFIDENCE, metavar="C",
                   help=f"confidence of the guarantee (default {DEFAULT_CONFIDENCE:g})")
    g.add_argument("--max-stages", type=int, default=3, metavar="M", help="most judges in a chain (default 3)")
    g.add_argument("--fail-if-none", action="store_true", help=f"exit {EXIT_THRESHOLD} when no chain is certified")
    add_load_options(p)
    add_interval_options(p.add_argument_group("intervals"))
    add_json_option(p)
    p.set_defaults(func=cmd_cascade)


def _prices(text: str, files: int) -> list[float]:
    parts = [x.strip() for x in text.split(",")]
    if len(parts) != files:
        raise CalibError(f"--prices gives {len(parts)} price(s) for {files} run(s): one per run, in order")
    out = []
    for x in parts:
        try:
            v = float(x)
        except ValueError:
            raise CalibError(f"--prices: {x!r} is not a number") from None
        if not math.isfinite(v) or v < 0:
            raise CalibError(f"--prices: {x!r}: a price is a finite number >= 0")
        out.append(v)
    return out


def _names(args: argparse.Namespace) -> list[str]:
    if args.names is None:
        names = [Path(f).name for f in args.files]
        return names if len(set(names)) == len(names) else list(args.files)
    names = [n.strip() for n in args.names.split(",")]
    if len(names) != len(args.files) or any(not n for n in names) or len(set(names)) != len(names):
        raise CalibError(f"--names: give {len(args.files)} distinct non-empty names, one per run")
    return names


def cmd_cascade(args: argparse.Namespace) -> int:
    """``calib cascade RUN_A RUN_B ... --prices ... --person-price C --target-error A``."""
    from calib.present.two_stage import cascade_lines
    from calib.runs.decide import cascade, max_judges

    most = max_judges()

    if not 1 <= len(args.files) <= most:
        raise CalibError(f"cascade: give 1 to {most} runs, one per judge (got {len(args.files)})")
    prices = _prices(args.prices, len(args.files))
    if not math.isfinite(args.person_price) or args.person_price < 0:
        raise CalibError("--person-price: a finite number >= 0")
    if not 0 < args.target_error < 1 or not 0 < args.confidence < 1:
        raise CalibError("--target-error and --confidence: each strictly between 0 and 1")
    if args.max_stages < 1:
        raise CalibError(f"--max-stages: a whole number >= 1, got {args.max_stages}")
    names = _names(args)
    runs = []
    for f, nm in zip(args.files, names, strict=True):
        ds = load_dataset(f, args, name=nm)
        if ds.rows is None:
            raise CalibError(f"cascade: {f} is a count table: a cascade needs each item's judgment")
        runs.append(ds.rows)
    c = cascade(runs, names, prices, args.person_price, run_settings(args), max_stages=args.max_stages)
    code = EXIT_THRESHOLD if args.fail_if_none and c.best is None else EXIT_OK
    if args.json:
        emit_json({"schema": "calib.cascade/1", "files": list(args.files), **c.to_dict(), "exit_code": code})
        return code
    sys.stdout.write("\n".join(cascade_lines(c)) + "\n")
    return code
