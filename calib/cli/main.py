"""The parser of every subcommand and the entry point that turns errors into exit codes."""

from __future__ import annotations

import argparse
import io
import os
import sys
import traceback
from collections.abc import Sequence

from calib.cli.args import check_level
from calib.cli.audit import add_audit, add_compare
from calib.cli.cascade import add_cascade
from calib.cli.drift import add_drift
from calib.cli.fit import add_apply, add_fit, add_transport
from calib.cli.hosting import add_hosting
from calib.cli.labels import add_labels, attach_dash_values
from calib.cli.output import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK
from calib.cli.route import add_route
from calib.cli.sql import add_sql
from calib.cli.traffic import add_traffic
from calib.errors import CalibError


def build_parser() -> argparse.ArgumentParser:
    """The ``calib`` parser with its subcommands (no engine module is imported)."""
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
    add_transport(sub)
    add_compare(sub)
    add_route(sub)
    add_drift(sub)
    add_cascade(sub)
    add_sql(sub)
    add_labels(sub)
    add_traffic(sub)
    add_hosting(sub)
    return parser


def no_huge_pages() -> None:
    """Ask numpy not to back its arrays with transparent huge pages, before numpy is first
    imported (it reads ``NUMPY_MADVISE_HUGEPAGE`` once, at import; a user's own setting wins).

    A command's large arrays live for a fraction of a second: a huge page has to be found
    (compacting memory) and zeroed at its first touch, which costs more system time than
    the fewer page faults save. On this project's 2-core machine (``madvise`` policy) the
    audit of 1,000,000 continuous rows took 1.2-2.4 s of system time with them, 0.4-0.5 s
    without, and 0.6-1 s less wall time (``bench/bench_speed.py``). Long-lived processes
    (the dashboard's server, a notebook) keep numpy's default."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    no_huge_pages()
    for stream in (sys.stdout, sys.stderr):
        # input text reaches the output (ids, previews, file names): a lone surrogate or
        # an undecodable file name is printed escaped instead of ending the run
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(attach_dash_values(sys.argv[1:] if argv is None else argv))
    try:
        check_level(args)
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
