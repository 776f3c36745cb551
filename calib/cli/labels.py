"""``calib labels export|import``: the labels reviewers gave through a share link, read
from or added to the server's data directory (``CALIB_DATA_DIR``, or ``--data-dir``).
``calib labels agreement LABELS``: agreement among the reviewers of a labels file
(:func:`calib.labels.reviewers.reviewer_agreement`), as text or ``--json``.

Both name the share by its link token (``--token``, or the whole link): the token is
the only way to a share's labels, as on the page. ``export`` writes every label (the
history, oldest first) as JSONL or CSV; it needs reviewing to be open on the link, or
the owner secret (then it also works after the link was revoked or reviewing turned
off); with ``--what final|assignment|agreement`` it writes the hand-off records of
:mod:`calib.labels.handoff` instead (the assignment: the owner's). ``import`` is the
owner's (``--owner-secret``): it reads a labels file, or a final-labels file as
adjudications (:func:`calib.runs.labels.read_any_labels`), checks every label against the share's
review plan (:func:`calib.hosting.labels.share_plans`) and appends the good ones in one
transaction; bad lines and refused labels are listed on stderr, each with its reason.
Secrets may come from the environment (``CALIB_SHARE_TOKEN``, ``CALIB_OWNER_SECRET``)
so that they stay out of the shell history.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from calib.cli.args import check_writable
from calib.cli.output import EXIT_OK, EXIT_THRESHOLD
from calib.errors import CalibError

#: Most messages printed for one import (the rest are counted).
MAX_PRINTED = 50

#: A token (32 characters) or owner secret (43) that begins with ``-``: the shapes of
#: :mod:`calib.hosting.shares`, written out so that building the parser imports no engine.
#: Shares made before :func:`calib.hosting.shares.new_secret` can have such values.
_DASH_VALUES = {
    "--token": re.compile(r"-[A-Za-z0-9_-]{31}"),
    "--owner-secret": re.compile(r"-[A-Za-z0-9_-]{42}"),
}


def attach_dash_values(argv: Sequence[object]) -> list[object]:
    """``--token -Xy…`` rewritten ``--token=-Xy…`` (the same for ``--owner-secret``).

    argparse takes any word beginning with ``-`` for an option, so ``--token -Xy…`` fails
    with "expected one argument" although the value is a token. Only a word of a token's
    or an owner secret's exact shape after its own flag is joined; anything else reaches
    argparse untouched.
    """
    words = list(argv)
    out: list[object] = []
    i = 0
    while i < len(words):
        word, value = words[i], words[i + 1] if i + 1 < len(words) else None
        pattern = _DASH_VALUES.get(word) if isinstance(word, str) else None
        if pattern is not None and isinstance(value, str) and pattern.fullmatch(value):
            out.append(f"{word}={value}")
            i += 2
        else:
            out.append(word)
            i += 1
    return out


def add_labels(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "labels",
        help="export or import the labels reviewers gave through a share link; their agreement",
        description="calib labels export|import works on the server's data directory (CALIB_DATA_DIR). "
        "export writes a share's labels (every one, oldest first) as JSONL or CSV; import adds "
        "a labels file's labels to a share (owner only). agreement reports how far the reviewers "
        "of a labels file agree.",
    )
    act = p.add_subparsers(dest="labels_action", metavar="ACTION")
    act.required = True
    ex = act.add_parser("export", help="write a share's labels as JSONL or CSV")
    _common(ex)
    ex.add_argument(
        "--format",
        choices=("jsonl", "csv"),
        default=None,
        help="jsonl or csv (default: from --output's suffix, else jsonl)",
    )
    ex.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    ex.add_argument("--what", choices=("labels", "final", "assignment", "agreement"), default="labels",
                    help="labels (every label, the default), final (each item's final label), assignment (who "
                    "took which item; owner only) or agreement (the figures of calib labels agreement)")
    ex.add_argument("--dataset", default=None, help="final, assignment, agreement: the dataset, when several")
    ex.add_argument("--reps", type=int, default=2000, help="agreement: bootstrap resamples (default 2000)")
    ex.add_argument("--seed", type=int, default=0, help="agreement: bootstrap seed (default 0)")
    ex.add_argument("--level", type=float, default=0.95, help="agreement: interval level (default 0.95)")
    ex.set_defaults(func=run_export)
    im = act.add_parser("import", help="add a labels file's labels to a share (owner only)")
    im.add_argument("file", metavar="FILE", help="a labels file (JSONL or CSV, as export writes)")
    _common(im)
    im.set_defaults(func=run_import)
    ag = act.add_parser(
        "agreement",
        help="agreement among the reviewers of a labels file (kappa, alpha, percent agreement)",
        description="Cohen's kappa (two reviewers), Fleiss' kappa, Krippendorff's alpha and the percent "
        "agreement of the reviewers of a labels file (JSONL or CSV, as export writes: one line per "
        "reviewer's label with item, reviewer, correct true/false and unsure), each with a bootstrap "
        "interval over items; each reviewer's agreement with the final labels; the reviewers' error rate.",
    )
    ag.add_argument("file", metavar="LABELS", help="a labels file (JSONL or CSV)")
    ag.add_argument("--json", action="store_true", help="print one JSON object")
    ag.add_argument("--reps", type=int, default=2000, help="bootstrap resamples (default 2000; 0: no intervals)")
    ag.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    ag.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    ag.add_argument("--dataset", default=None, help="the dataset the labels are of, when they name several")
    ag.set_defaults(func=run_agreement)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--token", metavar="TOKEN", help="the share link or its token (default: CALIB_SHARE_TOKEN)"
    )
    p.add_argument(
        "--owner-secret",
        dest="owner_secret",
        metavar="KEY",
        help="the link's owner key (default: CALIB_OWNER_SECRET)",
    )
    p.add_argument(
        "--data-dir",
        dest="data_dir",
        metavar="DIR",
        help="the server's data directory (default: CALIB_DATA_DIR, else ./.calib-data)",
    )


def token_of(text: str | None) -> str:
    """The token of ``--token``: the value itself, or the ``share`` parameter of a link."""
    text = (text or os.environ.get("CALIB_SHARE_TOKEN") or "").strip()
    if not text:
        raise CalibError("--token: give the share link or its token (or set CALIB_SHARE_TOKEN)")
    if "?" in text or "://" in text:
        found = parse_qs(urlsplit(text).query).get("share")
        if not found:
            raise CalibError("--token: the link has no share=... parameter")
        text = found[0]
    return text


def _store(args: argparse.Namespace):
    from calib.hosting.store import Store

    env = dict(os.environ)
    if args.data_dir:
        if not Path(args.data_dir).is_dir():
            raise CalibError(f"--data-dir {args.data_dir}: no such folder")
        env["CALIB_DATA_DIR"] = args.data_dir
    elif not Path(env.get("CALIB_DATA_DIR") or ".calib-data").is_dir():
        raise CalibError("no data directory: set CALIB_DATA_DIR or --data-dir to the server's")
    return Store.from_env(env)


def _secret(args: argparse.Namespace) -> str | None:
    return (args.owner_secret or os.environ.get("CALIB_OWNER_SECRET") or "").strip() or None


def run_export(args: argparse.Namespace) -> int:
    from calib.runs.labels import labels_to_csv, labels_to_jsonl

    fmt = args.format or ("csv" if (args.output or "").lower().endswith(".csv") else "jsonl")
    if args.output:
        check_writable(args.output, "--output")
    if not 0 <= args.reps <= MAX_REPS:
        raise CalibError(f"--reps: between 0 and {MAX_REPS:,}, got {args.reps:,}")
    token = token_of(args.token)
    got = _store(args).labels(token, owner_secret=_secret(args))
    if not got.ok:
        raise CalibError(got.message)
    if args.what == "labels":
        count, data = len(got.labels), labels_to_csv(got.labels) if fmt == "csv" else labels_to_jsonl(got.labels)
    else:
        from calib.runs.review import handoff_file

        records = _handoff_records(args, token, got.labels)
        count, data = len(records), handoff_file(records, args.what, fmt)
    what = "label(s)" if args.what == "labels" else f"{args.what} record(s)"
    if args.output:
        from calib.hosting.catalog import write_private

        write_private(args.output, data)  # 0600, like the store it comes from
        print(f"calib: wrote {count:,} {what} to {args.output}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return EXIT_OK


def _handoff_records(args: argparse.Namespace, token: str, labels: Sequence) -> list[dict]:
    """The final, assignment or agreement records of the share's labels, as the Review
    page's hand-off writes them (:func:`calib.runs.review.handoff`)."""
    from calib.cli.args import run_settings
    from calib.runs.review import handoff

    names = sorted({lab.dataset for lab in labels})
    if args.dataset is None and len(names) > 1:
        raise CalibError(f"the labels are of {len(names)} datasets: say which with --dataset")
    stored = args.dataset if args.dataset is not None else (names[0] if names else "")
    mine = [lab for lab in labels if lab.dataset == stored]
    if args.what == "agreement" and not mine:
        raise CalibError("no labels: no agreement to export")
    rows = _assignment_rows(args, token, stored) if args.what == "assignment" else ()
    return handoff(args.what, mine, run_settings(args), dataset=stored, assignment=rows)


def _assignment_rows(args: argparse.Namespace, token: str, stored: str) -> tuple:
    from calib.hosting.labels import NOT_REVIEWABLE_MESSAGE, share_plans
    from calib.limits import Limits

    secret = _secret(args)
    if secret is None:
        raise CalibError("--owner-secret: the assignment is the link owner's (or set CALIB_OWNER_SECRET)")
    store = _store(args)
    opened = store.open_share(token)
    setting = store.review_setting(token)
    if not opened.available or setting is None:
        raise CalibError(NOT_REVIEWABLE_MESSAGE)
    plans = share_plans(opened.share, setting, Limits.from_env())
    name = next((n for n in plans if (n if len(plans) > 1 else "") == stored), None)
    if name is None:
        raise CalibError(f"--dataset {stored[:80]!r}: not a dataset of this link")
    rows = store.assignment_rows(token, stored, [it.item for it in plans[name].items], owner_secret=secret)
    if rows is None:
        raise CalibError("--owner-secret: not this link's owner key")
    return rows


def run_import(args: argparse.Namespace) -> int:
    """Exit 0 when every label was added, 1 when some lines or labels were left out
    (listed on stderr), 2 when nothing could be imported (a refusal or an unreadable file)."""
    from calib.hosting.labels import share_plans
    from calib.limits import Limits
    from calib.runs.labels import read_any_labels

    token = token_of(args.token)
    secret = _secret(args)
    if secret is None:
        raise CalibError("--owner-secret: importing labels is the link owner's (or set CALIB_OWNER_SECRET)")
    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CalibError(f"{path}: cannot read ({exc.strerror})") from None
    limits = Limits.from_env()
    labels, problems = read_any_labels(data, path.name, options=limits.load_options(None))
    store = _store(args)
    opened = store.open_share(token)
    setting = store.review_setting(token)
    if not opened.available or setting is None or not setting.enabled:
        from calib.hosting.labels import NOT_REVIEWABLE_MESSAGE

        raise CalibError(NOT_REVIEWABLE_MESSAGE)
    out = store.import_labels(token, labels, share_plans(opened.share, setting, limits), owner_secret=secret)
    if not out.ok:
        raise CalibError(out.message)
    left_out = [*problems, *out.rejected]
    for msg in left_out[:MAX_PRINTED]:
        print(f"calib: {msg}", file=sys.stderr)
    if len(left_out) > MAX_PRINTED:
        print(f"calib: ... {len(left_out) - MAX_PRINTED:,} more", file=sys.stderr)
    print(
        f"calib: imported {out.written:,} label(s) from {path.name}"
        + (f"; {len(left_out):,} left out" if left_out else ""),
        file=sys.stderr,
    )
    return EXIT_THRESHOLD if left_out else EXIT_OK


#: Most bad lines of a labels file named on stderr (all are in --json's messages).
SHOW_BAD = 5
#: Most resamples ``--reps`` may ask for (a limit before the cost).
MAX_REPS = 100_000


def run_agreement(args: argparse.Namespace) -> int:
    """Print the reviewers' agreement; bad lines are named on stderr and left out."""
    from calib.cli.args import run_settings
    from calib.cli.output import emit_json
    from calib.runs.labels import read_reviewer_labels, reviewers

    if not 0 <= args.reps <= MAX_REPS:
        raise CalibError(f"--reps: between 0 and {MAX_REPS:,}, got {args.reps:,}")
    path = Path(args.file)
    labels, bad = read_reviewer_labels(path)
    for msg in bad[:SHOW_BAD]:
        print(f"calib: warning: {msg}", file=sys.stderr)
    if len(bad) > SHOW_BAD:
        print(f"calib: warning: ... {len(bad) - SHOW_BAD:,} more bad lines (all in --json's messages)",
              file=sys.stderr)
    names = sorted({lab.dataset for lab in labels})
    if args.dataset is None and len(names) > 1:
        shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
        raise CalibError(f"{path}: the labels are of {len(names)} datasets ({shown}): say which with --dataset")
    run = reviewers(labels, run_settings(args), messages=bad, dataset=args.dataset)
    if args.json:
        emit_json({**run.agreement.to_dict(), "reviewer_error": run.error.to_dict(), "file": str(path),
                   "messages": list(bad)})
    else:
        print(f"Reviewers' agreement in {path}")
        for line in [*run.agreement.sentences(), run.error.sentence()]:
            print(line)
    return EXIT_OK
