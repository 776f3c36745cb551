"""``calib route --decisions OUT``: every item's probability and route written back
(:mod:`calib.writeback`), as JSONL, CSV or a platform's import form."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from calib.cli.args import check_writable, number
from calib.errors import CalibError

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.runs.decide import Decision
    from calib.runs.maps import CalibrationMap

#: ``--decisions-format`` choices (:data:`calib.writeback.FORMATS`, kept here so ``--help`` imports nothing).
FORMATS = ("jsonl", "csv", "langfuse", "phoenix", "mlflow", "otel")


def number_or_phrase(text: str) -> float | str:
    """An argparse type: a finite number, or a phrase of a scale of phrases (``--threshold high``,
    read once the file is: :func:`phrase_threshold`)."""
    try:
        return number(text)
    except argparse.ArgumentTypeError:
        if not text.strip() or any(c.isdigit() for c in text.strip()[:1]):
            raise
        return text.strip()


def check_phrase_threshold(args: argparse.Namespace, with_map: bool) -> None:
    """A threshold given as a phrase is on the stated scale: refused with ``--map``."""
    if with_map and isinstance(args.threshold, str):
        raise CalibError(f"--threshold {args.threshold!r}: with --map the threshold is a calibrated probability "
                         "between 0 and 1, not a phrase")


def phrase_threshold(ds: Dataset, args: argparse.Namespace) -> None:
    """Read a ``--threshold`` phrase as its rank on the file's scale of phrases (:mod:`calib.verbal`)."""
    from calib.verbal import rank_of

    if not isinstance(args.threshold, str):
        return
    labels = ds.table.scale.labels
    rank = rank_of(labels, args.threshold) if labels else None
    if rank is None:
        known = f"one of {', '.join(labels)}" if labels else "a number: the confidences of this file are not phrases"
        raise CalibError(f"--threshold {args.threshold!r}: not a phrase of {args.file}'s scale; give {known}")
    args.threshold = rank


def add_decisions_options(o: argparse._ArgumentGroup) -> None:
    o.add_argument("--decisions", metavar="OUT.jsonl",
                   help="write every item's decision: id, stated, probability (calibrated with --map), route "
                        "(person / accepted), the threshold and the certificate it came from")
    o.add_argument("--decisions-format", choices=FORMATS, default=None,
                   help="jsonl (default), csv (default for a .csv name), or a platform's import form: langfuse "
                        "(ingestion batch of scores), phoenix (span annotations), mlflow (assessments, JSON "
                        "lines), otel (OTLP JSON gen_ai.evaluation.result events)")


def check_decisions_flags(args: argparse.Namespace) -> None:
    """Refuse what ``--decisions`` cannot write, before any file is read."""
    if args.decisions is None:
        if args.decisions_format is not None:
            raise CalibError("--decisions-format: give the file to write with --decisions OUT")
        return
    check_writable(args.decisions, "--decisions")
    if args.upper is not None:
        raise CalibError("--decisions writes two routes, person and accepted: --upper's middle band has none")
    if args.by is not None or args.by_group:
        raise CalibError("--decisions writes the routes at one threshold: drop --by / --by-group")
    if args.decisions_format is None:
        args.decisions_format = "csv" if args.decisions.lower().endswith(".csv") else "jsonl"


def write_decisions(ds: Dataset, dec: Decision, cmap: CalibrationMap | None, args: argparse.Namespace,
                    routed_at: str) -> dict[str, object]:
    """Write ``--decisions``; what ``calib route --json`` says of it."""
    from calib.runs.decide import written_decisions

    if ds.rows is None:
        raise CalibError(f"--decisions: {args.file} is a count table: it has no items to write decisions for")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    data, d, cert = written_decisions(ds.rows, dec, float(args.threshold), routed_at, args.decisions_format,
                                      now=now, calibration=cmap, name=ds.name)
    try:
        Path(args.decisions).write_bytes(data)
    except OSError as exc:
        raise CalibError(f"--decisions {args.decisions}: cannot write ({exc.strerror or exc})") from None
    return {"path": args.decisions, "format": args.decisions_format, "rows": int(d.accepted.size), **d.counts,
            "certificate": cert.to_dict()}
