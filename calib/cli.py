"""Command line: ``python -m calib SUBCOMMAND ...`` (also the console script ``calib``).

Argument parsing only: each subcommand is one small function that loads, calls
the engine and prints. Flags are compatible with calikit's, so existing commands
work unchanged (``calib audit llama.jsonl --rescale 0,100``).

Exit codes: 0 success; 1 a ``--fail-above-*`` threshold was exceeded (for CI
pipelines); 2 unusable input or options (the message, never a traceback, goes to
stderr); 3 an internal error (a bug: please report it; ``CALIB_DEBUG=1`` shows
the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from calib.errors import CalibError

EXIT_OK, EXIT_THRESHOLD, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def add_load_options(p: argparse.ArgumentParser) -> None:
    """Flags every subcommand that reads a file understands (calikit's names kept)."""
    g = p.add_argument_group("reading the file")
    g.add_argument("--rescale", metavar="LO,HI", help="the stated scale, e.g. 0,100 (default: detected)")
    g.add_argument("--prob-key", "--confidence-key", dest="confidence_key", metavar="K",
                   help="field holding the stated confidence (default: detected)")
    g.add_argument("--label-key", "--outcome-key", dest="outcome_key", metavar="K",
                   help="field holding the outcome, right/wrong (default: detected)")
    g.add_argument("--group-key", dest="group_key", metavar="K",
                   help="field to audit by group, e.g. subject or model")
    g.add_argument("--strict", action="store_true", help="fail on the first bad line instead of reporting it")


def load_options(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """:class:`~calib.loading.LoadOptions` from the flags of :func:`add_load_options`."""
    from calib.loading import LoadOptions
    from calib.scale import parse_rescale

    return LoadOptions(
        confidence_key=args.confidence_key, outcome_key=args.outcome_key, group_key=args.group_key,
        rescale=parse_rescale(args.rescale) if args.rescale else None, strict=bool(args.strict),
    )


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
    if v != v or v in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


# ------------------------------------------------------------------- audit
def add_audit(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "audit", help="audit a file: scale use, per-value hit rates, ECE, Brier vs constant, tests",
        description="Audit the stated confidence in FILE (JSONL of judged items, .jsonl.gz, a count table "
                    "CSV/Parquet, lm-eval samples or an Inspect log).",
    )
    p.add_argument("file", metavar="FILE")
    add_load_options(p)
    g = p.add_argument_group("the audit")
    g.add_argument("--scheme", choices=("auto", "values", "width", "mass"), default="auto",
                   help="ECE bins: one per stated value, equal width or equal mass (default: values when the "
                        "table has at most 101 distinct values, else width)")
    g.add_argument("--bins", type=_positive_int, default=10, metavar="N", help="bins for width/mass (default 10)")
    g.add_argument("--reps", type=_positive_int, default=2000, metavar="N",
                   help="bootstrap resamples, 0 for none (default 2000)")
    g.add_argument("--seed", type=_positive_int, default=0, metavar="S", help="bootstrap seed (default 0)")
    g.add_argument("--level", type=_number, default=0.95, metavar="L", help="interval level (default 0.95)")
    g.add_argument("--below", type=_number, default=None, metavar="V",
                   help="report the share of answers stated below V (default: 80 on 0-100)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print one JSON object (keys documented in the README)")
    o.add_argument("--fail-above-ece", type=_number, default=None, metavar="X",
                   help="exit with code 1 when the ECE is above X (for CI pipelines)")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    """``calib audit FILE``: print the audit, text or JSON."""
    from calib.audit import audit
    from calib.loading import load
    from calib.report import render_text, to_json

    ds = load(args.file, options=load_options(args))
    if ds.table.total == 0:
        raise CalibError(f"{args.file}: nothing to audit: {ds.report.summary()}")
    result = audit(
        ds.table, scheme=args.scheme, bins=args.bins, reps=args.reps, seed=args.seed, level=args.level,
        below=args.below, name=ds.name, load_report=ds.report,
    )
    sys.stdout.write(to_json(result) + "\n" if args.json else render_text(result))
    if args.fail_above_ece is not None and result.ece is not None and result.ece > args.fail_above_ece:
        print(f"calib: ECE {result.ece:.4f} is above --fail-above-ece {args.fail_above_ece:g}", file=sys.stderr)
        return EXIT_THRESHOLD
    return EXIT_OK


# -------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="calib", description="A calibration audit for models that state how sure they are.")
    from calib import __version__

    parser.add_argument("--version", action="version", version=f"calib {__version__}")
    # argparse exits with 2 (EXIT_INPUT) on a usage error
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_audit(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CalibError as exc:
        print(f"calib: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # output piped into head: not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # a bug: say so plainly, traceback only on request
        if os.environ.get("CALIB_DEBUG"):
            traceback.print_exc()
        print(f"calib: internal error ({type(exc).__name__}: {exc}); please report it "
              "(CALIB_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
