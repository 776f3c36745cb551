"""Command line: ``python -m calib SUBCOMMAND ...`` (also the console script ``calib``).

Argument parsing and printing only: each subcommand is one small function that
loads, calls the engine and prints what it returned (figures written with
:mod:`calib.present.format`, the report's pieces assembled by :mod:`calib.present`).
Flags are compatible with calikit's, so existing commands work unchanged::

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

The package: :mod:`~calib.cli.args` (shared flags, their types, loading the files they
name), :mod:`~calib.cli.output` (exit codes, strict JSON, text tables), one module per
command family (:mod:`~calib.cli.audit`: audit and compare; :mod:`~calib.cli.fit`: fit and
apply; :mod:`~calib.cli.route`: route, its ``--decisions`` in :mod:`~calib.cli.decisions`;
:mod:`~calib.cli.drift`; :mod:`~calib.cli.sql`: the warehouse query; :mod:`~calib.cli.labels`:
export and import of a share's labels on the server's data directory, and ``calib labels
agreement`` on a labels file; :mod:`~calib.cli.traffic`: ``calib plan``, ``estimate``,
``certify`` on traffic; :mod:`~calib.cli.cascade`: the cheapest certified chain of judges;
:mod:`~calib.cli.hosting`: ``calib hosting migrate``, a data directory's SQLite catalog
copied into PostgreSQL) and :mod:`~calib.cli.main` (the parser, the entry point). Every
command asks :mod:`calib.runs`, never the engine below it.
"""

from calib.cli.args import add_load_options, load_options
from calib.cli.audit import write_plot
from calib.cli.fit import APPLY_FIELD, apply_records, check_map_scale
from calib.cli.main import build_parser, main
from calib.cli.output import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_THRESHOLD
from calib.present.tables import map_formula
from calib.settings import METHODS

__all__ = ["APPLY_FIELD", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_OK", "EXIT_THRESHOLD", "METHODS", "add_load_options",
           "apply_records", "build_parser", "check_map_scale", "load_options", "main", "map_formula", "write_plot"]
