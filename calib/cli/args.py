"""What the user gives the command line: the shared flags, their types, and the files they name.

Every subcommand that reads a file takes the flags of :func:`add_load_options` (calikit's
names kept) and turns them into :class:`~calib.readers.base.LoadOptions` with
:func:`load_options`; the figures flags are :func:`add_stats_options`. The choices come
from :mod:`calib.settings`, which imports nothing heavy: building the parser
(``calib --help``) does not import the engine, which every subcommand imports inside.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from calib.errors import CalibError
from calib.settings import BINS, LEVEL, NORMALISATIONS, REPS, SCHEME_CHOICES, VARIANTS

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.readers.base import LoadOptions
    from calib.runs.settings import Settings


def add_load_options(p: argparse.ArgumentParser) -> None:
    """Flags every subcommand that reads a file understands (calikit's names kept)."""
    g = p.add_argument_group("reading the file")
    g.add_argument("--rescale", metavar="LO,HI", help="the stated scale, e.g. 0,100 (default: detected)")
    g.add_argument("--mixed-scales", dest="mixed_scales", action="store_true",
                   help="the confidences mix probabilities and a larger scale (0.85 next to 85): read each by "
                        "its range, up to 1 a probability, above 1 on the detected scale (default: refuse)")
    g.add_argument("--prob-key", "--confidence-key", dest="confidence_key", metavar="K",
                   help="field holding the stated confidence (default: detected); for Inspect logs "
                        "'logprob' uses the answer letter's token probability, 'stated|logprob' falls back to it")
    g.add_argument("--label-key", "--outcome-key", dest="outcome_key", metavar="K",
                   help="field holding the outcome, right/wrong (default: detected); for Inspect logs, the scorer")
    g.add_argument("--pred-key", dest="pred_key", metavar="K",
                   help="field holding the answer given, compared with --gold-key when there is no outcome field")
    g.add_argument("--gold-key", dest="gold_key", metavar="K", help="field holding the right answer")
    g.add_argument("--group-key", dest="group_key", metavar="K",
                   help="field to audit by group, e.g. subject or model")
    g.add_argument("--id-key", dest="id_key", metavar="K", help="field holding the item id (default: detected)")
    g.add_argument("--cluster-key", dest="cluster_key", metavar="K",
                   help="field grouping dependent rows (the same item judged several times): intervals resample "
                        "these clusters and the tests allow for them (default: Inspect epochs and ids on several "
                        "rows are clusters; 'none' treats rows as independent)")
    g.add_argument("--variant", choices=VARIANTS, default="acc",
                   help="lm-evaluation-harness samples: score as acc or acc_norm (default acc)")
    g.add_argument("--normalisation", "--normalization", dest="normalisation",
                   choices=NORMALISATIONS, default="none",
                   help="option log-probs: divide each option's log-prob by its length in characters, bytes "
                        "or tokens (default none; --variant acc_norm implies char)")
    g.add_argument("--phrases", metavar="A,B,C",
                   help="confidence in words: the phrases in order, lowest first, e.g. \"low,medium,high\" "
                        "(default: the built-in phrase lists; any other phrase is a bad line)")
    g.add_argument("--strict", action="store_true", help="fail on the first bad line instead of reporting it")


def load_options(args: argparse.Namespace) -> LoadOptions:
    """:class:`~calib.readers.base.LoadOptions` from the flags of :func:`add_load_options`, under
    the same limits as the dashboard (``CALIB_MAX_ROWS``, ``CALIB_MAX_DECOMPRESSED_MB``…,
    :meth:`calib.limits.Limits.from_env`), so that one variable raises a cap everywhere."""
    from calib.limits import Limits
    from calib.readers.base import LoadOptions
    from calib.scale import parse_rescale

    extra = {k: v for k, v in (("pred_key", getattr(args, "pred_key", None)),
                               ("gold_key", getattr(args, "gold_key", None))) if v}
    return Limits.from_env().load_options(LoadOptions(
        confidence_key=args.confidence_key, outcome_key=args.outcome_key, group_key=args.group_key,
        id_key=getattr(args, "id_key", None), cluster_key=getattr(args, "cluster_key", None),
        rescale=parse_rescale(args.rescale) if args.rescale else None,
        mixed_scales=bool(getattr(args, "mixed_scales", False)), strict=bool(args.strict),
        normalisation=getattr(args, "normalisation", "none") or "none", variant=getattr(args, "variant", "acc"),
        phrases=getattr(args, "phrases", None), extra=extra,
    ))


def add_stats_options(p: argparse.ArgumentParser, *, bins_help: str, reps_help: str = "") -> None:
    """Binning, bootstrap and interval flags (``--scheme --bins --reps --seed --level``)."""
    g = p.add_argument_group("figures and intervals")
    g.add_argument("--scheme", choices=SCHEME_CHOICES, default="auto",
                   help="ECE bins: one per stated value, equal width or equal mass (default: values for a stated "
                        "scale, at most 101 distinct values used 20 times each on average, else width)")
    g.add_argument("--bins", type=positive_int, default=BINS, metavar="N", help=bins_help)
    add_interval_options(g, reps_help=reps_help)


def add_interval_options(g: argparse._ArgumentGroup, *, reps_help: str = "") -> None:
    """The bootstrap and interval flags (``--reps --seed --level``)."""
    g.add_argument("--reps", type=positive_int, default=REPS, metavar="N",
                   help=reps_help or f"bootstrap resamples, 0 for none (default {REPS})")
    g.add_argument("--seed", type=positive_int, default=0, metavar="S", help="bootstrap seed (default 0)")
    g.add_argument("--level", type=number, default=LEVEL, metavar="L", help=f"interval level (default {LEVEL:g})")


def add_json_option(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The output group with ``--json``; subcommands add their own output flags to it."""
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print one JSON object (keys documented in the README)")
    return o


def add_labels_options(p: argparse.ArgumentParser) -> None:
    """``calib audit --labels``: reviewers' labels as the outcome (issue 12), with the
    threshold their audit sample was drawn at and, for a file of several datasets' labels,
    which one."""
    g = p.add_argument_group("reviewers' labels")
    g.add_argument("--labels", metavar="LABELS",
                   help="reviewers' labels (JSONL or CSV, from `calib labels export` or the Review page): their "
                        "verdict is the outcome of the items they labelled; adds agreement (Cohen's kappa) and "
                        "the audit sample's estimate of the error among items accepted unseen")
    g.add_argument("--labels-threshold", dest="labels_threshold", type=number, default=None, metavar="T",
                   help="the review threshold the audit sample was drawn at, on the stated scale (default: the "
                        "default review threshold, what the Routing and Review pages start at)")
    g.add_argument("--labels-dataset", dest="labels_dataset", default=None, metavar="NAME",
                   help="the dataset whose labels to use, when LABELS holds several (default: the only one)")


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return v


def number(text: str) -> float:
    """An argparse type: a finite number."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def check_level(args: argparse.Namespace) -> None:
    """Refuse an interval level outside (0, 1) before any file is read."""
    level = getattr(args, "level", None)
    if level is not None and not 0 < level < 1:
        raise CalibError(f"--level: the interval level must be between 0 and 1 (e.g. 0.95), got {level:g}")


def check_writable(path: str, flag: str) -> None:
    """Refuse an output path whose folder is missing or which is a folder (before any work)."""
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise CalibError(f"{flag} {path}: the folder {parent} does not exist")
    if Path(path).is_dir():
        raise CalibError(f"{flag} {path}: is a folder, not a file name")


def load_dataset(path: str, args: argparse.Namespace, *, name: str | None = None) -> Dataset:
    """Load one file or folder with the shared flags; refuse one with no usable rows."""
    from calib.loading import load

    ds = load(path, name=name, options=load_options(args))
    warn_load(ds)
    if ds.table.total == 0:
        raise CalibError(f"{path}: nothing to use: {ds.report.summary()}")
    return ds


def warn_load(ds: Dataset) -> None:
    """Print the load report's warnings (an option that contradicts the data, such as
    ``--rescale 0,100`` on values 1 to 9) on stderr; ``--json`` has them in its notes."""
    for w in ds.report.warnings:
        print(f"calib: warning: {w}", file=sys.stderr)


def add_decision_options(g: argparse._ArgumentGroup, *, costs: bool = True) -> None:
    """The threshold decision's flags shared by ``route`` and ``compare`` (issue 11):
    ``--confidence`` and, with ``costs``, ``--cost-review --cost-miss --cost-right``
    (``route`` declares ``--target-error`` and its costs itself, with their history)."""
    from calib.settings import DEFAULT_CONFIDENCE

    g.add_argument("--confidence", type=number, default=DEFAULT_CONFIDENCE, metavar="C",
                   help="confidence 1-delta of the recommended threshold's guarantee, strictly between 0 and 1 "
                        f"(default {DEFAULT_CONFIDENCE:g})")
    if costs:
        g.add_argument("--cost-review", type=number, default=None, metavar="C", help="cost of one review")
        g.add_argument("--cost-miss", type=number, default=None, metavar="C",
                       help="cost of one error accepted unseen")
    g.add_argument("--cost-right", type=number, default=None, metavar="C",
                   help="cost of reviewing an item that was right anyway (default: --cost-review)")


def check_decision_flags(args: argparse.Namespace) -> None:
    """Refuse a target, confidence or cost the decision cannot use, naming the flag,
    before any file is read: levels strictly in (0, 1), costs finite and >= 0 (a cost
    not given counts 0, as in :func:`calib.decision.costs`)."""
    target = getattr(args, "target_error", None)
    if target is not None and not 0 < target < 1:
        raise CalibError(f"--target-error: an error rate between 0 and 1 (exclusive, e.g. 0.05), got {target:g}")
    conf = getattr(args, "confidence", None)
    if conf is not None and not 0 < conf < 1:
        raise CalibError(f"--confidence: the confidence 1-delta must be strictly between 0 and 1 (e.g. 0.95), "
                         f"got {conf:g}")
    for flag, attr, what in (("--cost-review", "cost_review", "the cost per review"),
                             ("--cost-miss", "cost_miss", "the cost per missed error"),
                             ("--cost-right", "cost_right", "the cost of reviewing a right answer")):
        v = getattr(args, attr, None)
        if v is not None and v < 0:  # number() has refused non-finite values already
            raise CalibError(f"{flag} {v:g}: {what} must be a non-negative number")
    if getattr(args, "cost_right", None) is not None and args.cost_review is None and args.cost_miss is None:
        raise CalibError("--cost-right needs --cost-review or --cost-miss (the cost curve's other costs)")


def run_settings(args: argparse.Namespace) -> Settings:
    """The one :class:`~calib.runs.settings.Settings` of a command's flags; a flag the
    command does not have keeps the engine's default."""
    from calib.runs.settings import Settings

    base = Settings()
    given = {f: getattr(args, a) for f, a in _SETTINGS_FLAGS if getattr(args, a, None) is not None}
    if getattr(args, "by", None) is not None or getattr(args, "by_group", False):
        given["by_group"] = True
    if getattr(args, "scheme", None) is not None and args.scheme not in SCHEME_CHOICES:
        given.pop("scheme")
    out = replace(base, **given)
    if hasattr(args, "seed"):  # a traffic plan's draw: no --seed is fresh randomness
        out = replace(out, seed=args.seed)
    return out


#: (Settings field, flag attribute) read by :func:`run_settings`.
_SETTINGS_FLAGS: tuple[tuple[str, str], ...] = (
    ("level", "level"), ("reps", "reps"), ("scheme", "scheme"), ("bins", "bins"), ("below", "below"),
    ("method", "method"), ("scoring", "scoring"), ("folds", "folds"), ("hist_scheme", "hist_scheme"),
    ("hist_bins", "bins"), ("target", "target_error"), ("confidence", "confidence"),
    ("cost_review", "cost_review"), ("cost_miss", "cost_miss"), ("cost_right", "cost_right"),
    ("capacity", "capacity"), ("procedure", "procedure"), ("simultaneous", "simultaneous"),
)
