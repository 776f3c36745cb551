"""``calib plan``, ``calib estimate``, ``calib certify``: labelling traffic as it comes.

A traffic file holds a judge's items without outcomes (:mod:`calib.traffic.read`); labels are
the reviewers' label records (``calib labels export``). The engine is :mod:`calib.traffic`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from calib.cli.args import add_json_option, check_writable, number, run_settings
from calib.cli.output import EXIT_OK, EXIT_THRESHOLD, emit_json
from calib.errors import CalibError
from calib.settings import DEFAULT_CONFIDENCE, DEFAULT_TARGET

if TYPE_CHECKING:
    from calib.runs.traffic import Labelled, Traffic


def _common(p: argparse.ArgumentParser, labels_required: bool, with_queue: bool = True) -> None:
    p.add_argument("traffic", metavar="TRAFFIC", help="items a judge scored, outcomes not needed: any input "
                   "calib audit reads (JSONL, option log-probs, lm-eval samples, an Inspect log) or a CSV")
    p.add_argument("--labels", required=labels_required, metavar="L",
                   help="labels (JSONL or CSV label records: item, correct, reviewer, time, ...)")
    p.add_argument("--confidence-key", help="the traffic's confidence field (default: detected)")
    p.add_argument("--id-key", help="the traffic's id field (default: detected; labels join on it)")
    p.add_argument("--group-key", help=argparse.SUPPRESS)
    p.add_argument("--cluster-key", metavar="FIELD", help="a field whose value groups dependent items (one "
                   "conversation); default: inferred (Inspect epochs, repeated ids)")
    p.add_argument("--format", choices=("auto", "stated", "logprobs", "lmeval", "inspect"), default="auto",
                   help="the input's format (default: recognised)")
    if with_queue:
        p.add_argument("--queue-below", type=number, metavar="T", help="the review threshold: items below it are "
                       "the review queue, each reviewed (inclusion probability 1), in strata of their own")


def add_traffic(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("plan", help="the next items of traffic to label (stratified, with inclusion probabilities)")
    _common(p, False)
    p.add_argument("--budget", type=int, required=True, metavar="K", help="how many items to plan")
    p.add_argument("--target-error", type=number, help="allocate for the error among accepted under this target")
    p.add_argument("--confidence", type=number, default=DEFAULT_CONFIDENCE, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, help="random seed of the draw")
    o = add_json_option(p)
    o.add_argument("--out", metavar="FILE", help="also write the planned items (.jsonl or .csv)")
    p.set_defaults(func=run_plan)

    p = sub.add_parser("estimate", help="accuracy and error among accepted on the whole traffic, from its labels")
    _common(p, True)
    p.add_argument("--threshold", type=number, metavar="T", help="accept stated >= T (default: 90%% of the scale)")
    add_json_option(p)
    p.set_defaults(func=run_estimate)

    p = sub.add_parser("certify", help="an anytime-valid threshold certificate on traffic (exit 1: not certified "
                                       "or withdrawn)")
    _common(p, True)
    p.add_argument("--target-error", type=number, default=DEFAULT_TARGET, metavar="A")
    p.add_argument("--confidence", type=number, default=DEFAULT_CONFIDENCE, metavar="C")
    add_json_option(p)
    p.set_defaults(func=run_certify)

    p = sub.add_parser("budget", help="before labelling: how many labels the plan needs to certify (simulated), "
                                      "and the drift and kappa a number of labels can detect")
    _common(p, False, with_queue=False)
    p.add_argument("--target-error", type=number, default=DEFAULT_TARGET, metavar="A")
    p.add_argument("--confidence", type=number, default=DEFAULT_CONFIDENCE, metavar="C")
    p.add_argument("--planned", type=int, metavar="N", help="labels to size the detectable drift and kappa for "
                   "(default: the median labels to certify)")
    p.add_argument("--trials", type=int, metavar="K", help="simulated runs (default 40)")
    p.add_argument("--max-labels", type=int, metavar="M", help="labels a simulated run stops at (default 4,000)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the simulation")
    add_json_option(p)
    p.set_defaults(func=run_budget)


def _read(path: str, what: str, cap: int) -> bytes:
    """The file's bytes, refused over ``cap`` before they are read."""
    f = Path(path)
    try:
        if f.stat().st_size > cap:
            raise CalibError(f"{path}: {f.stat().st_size / 2**20:,.0f} MB, over the {cap / 2**20:,.0f} MB "
                             f"a {what} file may hold")
        return f.read_bytes()
    except OSError as exc:
        raise CalibError(f"{path}: cannot read ({exc.strerror})") from None


def _inputs(args: argparse.Namespace) -> tuple[Traffic, Labelled | None]:
    from calib.limits import Limits
    from calib.readers.base import LoadOptions
    from calib.runs.traffic import load_labels, load_traffic

    opts = Limits.from_env().load_options(LoadOptions(
        confidence_key=args.confidence_key, id_key=args.id_key, cluster_key=args.cluster_key,
        group_key=args.group_key, traffic=True))
    cap = opts.max_decompressed_bytes
    data = None if Path(args.traffic).is_dir() else _read(args.traffic, "traffic", cap)  # a folder: its files
    tr = load_traffic(args.traffic, data, options=opts, fmt=args.format)
    for m in tr.messages:
        print(f"calib: {m}", file=sys.stderr)
    if not args.labels:
        return tr, None
    lab, messages = load_labels(_read(args.labels, "labels", cap), Path(args.labels).name, tr, opts)
    for m in messages:
        if not _plan_columns(m):
            print(f"calib: {m}", file=sys.stderr)
    if lab.unknown:
        print(f"calib: {lab.unknown} label(s) name no item of {tr.name} (first: "
              f"{', '.join(repr(k[:40]) for k in lab.unknown_items)})", file=sys.stderr)
    return tr, lab


def _plan_columns(message: str) -> bool:
    """Is ``message`` only the label reader noting a filled-in plan file's own columns?"""
    from calib.runs.traffic import PLAN_FIELDS

    head, _, cols = message.partition("columns not read: ")
    return bool(cols) and {c.strip(" '") for c in cols.split(",")} <= {*PLAN_FIELDS, "id"}


def _say_labels(lab: Labelled) -> None:
    """The label report in words: how many items are labelled, by whom, of which kind."""
    s = lab.summary()
    who = ", ".join(f"{r or '(no name)'} {n}" for r, n in s["labels_by_reviewer"].items())
    kinds = ", ".join(f"{k} {n}" for k, n in s["labels_by_kind"].items())
    print(f"labels: {s['labelled_items']:,} items labelled (by {who or 'nobody'}; {kinds or 'none'})")


def run_plan(args: argparse.Namespace) -> int:
    from calib.runs.traffic import plan, plan_to_csv, plan_to_jsonl

    if args.out:
        check_writable(args.out, "--out")
        if not args.out.lower().endswith((".jsonl", ".csv")):
            raise CalibError(f"--out {args.out}: name a .jsonl or .csv file")
    tr, lab = _inputs(args)
    p = plan(tr, lab, args.budget, run_settings(args), queue_below=args.queue_below)
    if args.out:
        Path(args.out).write_bytes(plan_to_csv(p) if args.out.lower().endswith(".csv") else plan_to_jsonl(p))
    if args.json:
        emit_json(p.to_dict() | ({"label_report": lab.summary()} if lab is not None else {}))
    else:
        print(f"{len(p.ids)} item{'' if len(p.ids) == 1 else 's'} to label next (of {len(tr):,}):")
        for row in p.strata_rows:
            print(f"  stratum {row['stratum']}: {row['items']:,} items, {row['labelled']} labelled, "
                  f"{row['planned']} planned" + (" (review queue)" if row["queue"] else ""))
        if lab is not None:
            _say_labels(lab)
    return EXIT_OK


def run_estimate(args: argparse.Namespace) -> int:
    from calib.runs.traffic import estimate

    _, lab = _inputs(args)
    assert lab is not None  # --labels is required
    out = estimate(lab, run_settings(args), threshold=args.threshold, queue_below=args.queue_below)
    if args.json:
        emit_json(out)
        return EXIT_OK
    for key, title in (("accuracy", "accuracy"), ("error_accepted", f"error among accepted (>= {out['threshold']:g})")):
        e = out[key]
        if e["estimate"] is None:
            print(f"{title}: not estimable ({e.get('reason', '')})")
        else:
            lo, hi = e["ci"]
            same = e["uniform_labels_equivalent"]
            print(f"{title}: {e['estimate']:.1%} [{lo:.1%}, {hi:.1%}] from {e['labels']} labels, {e['method']}"
                  + ("" if same is None else f" (as {same:,} uniform labels)"))
    _say_labels(lab)
    return EXIT_OK


def run_certify(args: argparse.Namespace) -> int:
    from calib.runs.traffic import certify

    _, lab = _inputs(args)
    assert lab is not None
    cert = certify(lab, run_settings(args), queue_below=args.queue_below)
    if args.json:
        emit_json(cert.to_dict() | {"label_report": lab.summary()})
    elif cert.certified:
        _say_labels(lab)
        print(f"certified at {cert.threshold:g} since label {cert.since_label}: error among accepted <= "
              f"{cert.bound:.2%} (target {cert.target_error:.2%}, confidence {cert.confidence:.0%})")
    else:
        _say_labels(lab)
        more = "" if cert.labels_needed is None else f": about {cert.labels_needed} more labels at the current rate"
        print(f"not yet certified{more}")
    if cert.withdrawn:
        print(f"calib: ALARM: certificate withdrawn at {', '.join(f'{t:g}' for t in cert.withdrawn_thresholds)}: "
              "the bound rose above the target (the judge or the traffic changed?)", file=sys.stderr)
    return EXIT_OK if cert.certified and not cert.withdrawn else EXIT_THRESHOLD


def run_budget(args: argparse.Namespace) -> int:
    from calib.runs.traffic import budget

    tr, lab = _inputs(args)
    out = budget(lab if lab is not None else tr, run_settings(args), planned=args.planned, trials=args.trials,
                 max_labels=args.max_labels)
    if args.json:
        emit_json(out)
        return EXIT_OK
    for key, title in (("plan", "the plan"), ("uniform", "uniform sampling")):
        s = out["labels_to_certify"][key]
        mid = "more than the cap" if s["median"] is None else f"{s['median']:,}"
        lo = "?" if s["p10"] is None else f"{s['p10']:,}"
        hi = f"> {s['max_labels']:,}" if s["p90"] is None else f"{s['p90']:,}"
        print(f"labels to certify, {title}: median {mid} (10-90%: {lo} to {hi}; certified in "
              f"{s['certified_share']:.0%} of {s['trials']} runs)")
    d = out["detectable"]
    words = [f"{name} {d[k]:.1%}" for k, name in (("drift_accuracy", "accuracy drift"),
                                                  ("drift_error_accepted", "drift of the error among accepted"))
             if d[k] is not None] + ([f"kappa {d['kappa']:.2f}"] if d["kappa"] is not None else [])
    print(f"with {d['labels']:,} labels, detectable (power {d['power']:.0%}): " + ", ".join(words))
    print(f"assumes {out['assumes']}")
    return EXIT_OK
