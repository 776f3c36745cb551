"""Traffic: a judge's items without outcomes, and the reviewers' labels joined to them.

Contract
--------
- :func:`read_traffic` reads a JSONL or CSV file of items a judge has scored, *without*
  outcomes: each row needs a stated confidence (a key or column of
  :data:`calib.readers.stated.rules.CONFIDENCE_KEYS`, or ``confidence_key``) and, when the
  file has an id field (:data:`~calib.readers.stated.rules.ID_KEYS`, or ``id_key``), a
  non-empty id unique in the file; without an id field an item's key is ``"line N"``, as
  :func:`calib.labels.records.item_keys` writes it. An outcome present in a row is ignored:
  this reader is only called when the user says the file is traffic (``calib plan``,
  ``estimate``, ``certify``); ``calib audit`` never accepts a missing outcome.
- The stated scale is 0-1 when every value is in [0, 1], else 0-100; a value outside
  [0, 100], not a number, or missing drops its line with a message naming the line and the
  reason. Limits apply before parsing (:func:`calib.readers.jsonl.check_lines_cost`).
- :func:`join_labels` joins label records (:mod:`calib.labels.records`, as ``calib audit
  --labels`` reads them) by item key: an item's outcome is the majority of its reviewers'
  current labels (:func:`calib.labels.records.current`); a tie leaves it unlabelled and is
  counted; labels of unknown items are counted and named; the current labels joined are
  counted per reviewer and per kind (``queue``: the review queue, reviewed anyway;
  ``audit``: a planned or sampled item). Labelled items are ordered by arrival: the time of
  the item's first current label, file order breaking ties.
- :func:`load_traffic` reads any input ``calib audit`` reads, with ``traffic=True`` given to
  its reader (:class:`~calib.readers.base.LoadOptions`): rows without an outcome are kept.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from calib.errors import CalibError
from calib.labels.outcomes import SHOW_UNKNOWN
from calib.labels.records import MAX_KEY_CHARS, Label, current, item_keys, parse_time, read_labels
from calib.loadreport import LoadReport
from calib.readers.base import BadLines, LoadOptions, megabytes, more_bad_lines_message
from calib.readers.jsonl import BOM, as_number, check_lines_cost, json_objects
from calib.readers.stated.rules import CONFIDENCE_KEYS, ID_KEYS
from calib.rows import Judgments

#: Most bad-line messages kept (the rest are counted in one more message).
MAX_MESSAGES = 50


@dataclass(frozen=True, eq=False)
class Traffic:
    """Items a judge scored, without outcomes.

    Attributes
    ----------
    name:
        The file's name, for messages.
    keys:
        Per item, the key labels join on (its id, or ``"line N"``).
    stated:
        Per item, the stated confidence as written (on :attr:`top`'s scale).
    top:
        The scale's top: 1.0 (probabilities) or 100.0 (percent).
    messages:
        One message per dropped line (at most :data:`MAX_MESSAGES`, then a count).
    probs:
        Per item the stated value as a probability, when the scale does not start at 0 (a
        1-5 verbal scale read by :func:`load_traffic`); ``None``: ``stated / top``.
    cluster:
        Per item its cluster (dependent items: one conversation, Inspect epochs of one
        sample; :func:`calib.clusters.infer`), or ``None`` when items are independent.
    notes:
        What the reader said of the file (fields, scale, clusters), for the load report.
    """

    name: str
    keys: np.ndarray
    stated: np.ndarray
    top: float
    messages: tuple[str, ...] = ()
    probs: np.ndarray | None = None
    cluster: np.ndarray | None = None
    notes: tuple[str, ...] = ()

    @property
    def prob(self) -> np.ndarray:
        """The stated confidence as a probability in [0, 1]."""
        return self.stated / self.top if self.probs is None else self.probs

    def __len__(self) -> int:
        return int(self.keys.size)


@dataclass(frozen=True, eq=False)
class Labelled:
    """Traffic with the reviewers' verdicts joined.

    ``rows`` are the indices of the labelled items in arrival order, ``correct`` their
    verdicts; ``ties`` items whose reviewers split evenly (left unlabelled); ``unknown``
    labels naming no item of the traffic, ``unknown_items`` the first few such keys."""

    traffic: Traffic
    rows: np.ndarray
    correct: np.ndarray
    ties: int = 0
    unknown: int = 0
    unknown_items: tuple[str, ...] = ()
    reviewers: tuple[tuple[str, int], ...] = ()
    kinds: tuple[tuple[str, int], ...] = ()
    queue: np.ndarray | None = None

    def from_queue(self) -> np.ndarray:
        """Per labelled item (``rows`` order): was it labelled from the review queue (a person
        reviews every item below the threshold anyway: inclusion probability 1, not a draw)."""
        return np.zeros(self.rows.size, dtype=bool) if self.queue is None else self.queue

    def mask(self) -> np.ndarray:
        """Per traffic item: is it labelled."""
        m = np.zeros(len(self.traffic), dtype=bool)
        m[self.rows] = True
        return m

    def summary(self) -> dict[str, object]:
        return {"labelled_items": int(self.rows.size), "tied_items": self.ties,
                "labels_of_unknown_items": self.unknown, "unknown_items": list(self.unknown_items),
                "labels_by_reviewer": dict(self.reviewers), "labels_by_kind": dict(self.kinds),
                "queue_items": int(self.from_queue().sum())}


def _records(data: bytes, name: str, opts: LoadOptions, msgs: BadLines) -> list[tuple[int, dict]]:
    """``(line number, object)`` per readable row: JSONL objects or CSV rows as dicts."""
    if data.lstrip()[:1] == b"{":
        # a BOM opening a line, as the stated reader accepts
        return list(json_objects(data, opts.max_line_chars, msgs.add, line_bom=True))
    out: list[tuple[int, dict]] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CalibError(f"{name}: not UTF-8 (byte {exc.start + 1}); a CSV must be UTF-8") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        raise CalibError(f"{name}: empty, or neither JSONL nor a CSV with a header")
    try:
        for row in reader:
            out.append((reader.line_num, {k: v for k, v in row.items() if k is not None}))
    except csv.Error as exc:  # a cell over the csv module's field limit, a NUL
        raise CalibError(f"{name} line {reader.line_num + 1}: cannot be read as CSV ({exc})") from None
    return out


def records(data: bytes, name: str, opts: LoadOptions) -> list[tuple[int, dict]]:
    """``(line number, object)`` per row of a small JSONL or CSV file (a plan file), under the
    limits; the first unreadable line raises, named."""
    if len(data) > opts.max_decompressed_bytes:
        raise CalibError(f"{name}: {megabytes(len(data))} MB, over the {megabytes(opts.max_decompressed_bytes)} MB "
                         "a file may hold")
    check_lines_cost(data, name, opts)
    msgs = BadLines(name, MAX_MESSAGES)
    out = _records(data.removeprefix(BOM), name, opts, msgs)
    if msgs.kept:
        raise CalibError(msgs.kept[0])
    if len(out) > opts.max_rows:
        raise CalibError(f"{name}: more than {opts.max_rows:,} rows; refused (raise CALIB_MAX_ROWS)")
    return out


def _pick(objs: list[tuple[int, dict]], given: str | None, names: Sequence[str]) -> str | None:
    if given:
        return given
    present = set().union(*(o.keys() for _, o in objs[:1000])) if objs else set()
    lower = {k.lower(): k for k in present}
    return next((lower[n] for n in names if n in lower), None)


def _number(v: object) -> float | None:
    """A finite confidence from a JSON number or a numeric string (``"85%"`` too), else ``None``."""
    x = as_number(v.strip().rstrip("%") if isinstance(v, str) else v)
    return x if x is not None and math.isfinite(x) else None


def read_traffic(data: bytes, name: str, *, confidence_key: str | None = None, id_key: str | None = None,
                 options: LoadOptions | None = None) -> Traffic:  # long: one pass, every rule named
    """Traffic from JSONL or CSV bytes (see the module's contract).

    Raises
    ------
    CalibError
        Over a limit, no confidence field, or no usable row (the message names the first bad lines).
    """
    opts = options or LoadOptions()
    if len(data) > opts.max_decompressed_bytes:
        raise CalibError(f"{name}: {megabytes(len(data))} MB, over the "
                         f"{megabytes(opts.max_decompressed_bytes)} MB a traffic file may hold")
    check_lines_cost(data, name, opts)
    data = data.removeprefix(BOM)
    msgs = BadLines(name, MAX_MESSAGES)
    objs = _records(data, name, opts, msgs)
    if len(objs) > opts.max_rows:
        raise CalibError(f"{name}: more than {opts.max_rows:,} rows; refused (raise CALIB_MAX_ROWS)")
    ckey = _pick(objs, confidence_key, CONFIDENCE_KEYS)
    if ckey is None:
        raise CalibError(f"{name}: no confidence field (looked for {', '.join(CONFIDENCE_KEYS[:6])}, ...; "
                         "name it with --confidence-key)")
    ikey = _pick(objs, id_key, ID_KEYS)
    keys: list[str] = []
    values: list[float] = []
    seen: dict[str, int] = {}
    for no, obj in objs:
        x = _number(obj.get(ckey))
        if x is None:
            what = "missing" if obj.get(ckey) in (None, "") else f"not a finite number: {str(obj.get(ckey))[:40]!r}"
            msgs.add(no, f"confidence {what}")
            continue
        if not 0.0 <= x <= 100.0:
            msgs.add(no, f"confidence {x:g} is outside 0-100")
            continue
        if ikey is None:
            key = f"line {no}"
        else:
            raw = obj.get(ikey)
            key = "" if raw is None or isinstance(raw, bool | dict | list) else str(raw)
            if not key or len(key) > MAX_KEY_CHARS or "\x00" in key:
                msgs.add(no, f"{ikey} is missing or unusable as an item id")
                continue
            if key in seen:
                msgs.add(no, f"{ikey} {key[:40]!r} repeats line {seen[key]} (labels join on it)")
                continue
        seen[key] = no
        keys.append(key)
        values.append(x)
    if not values:
        first = "; ".join(msgs.messages()[:3])
        raise CalibError(f"{name}: no usable row" + (f" ({first})" if first else ""))
    stated = np.asarray(values, dtype=float)
    top = 1.0 if stated.max() <= 1.0 else 100.0
    return Traffic(name, np.asarray(keys, dtype=object), stated, top, msgs.messages())


def join_labels(traffic: Traffic, labels: Sequence[Label]) -> Labelled:
    """The traffic's items labelled by ``labels`` (see the module's contract)."""
    index = {k: i for i, k in enumerate(traffic.keys)}
    right: dict[int, int] = {}
    wrong: dict[int, int] = {}
    arrival: dict[int, tuple[object, int]] = {}
    unknown, unknown_items = 0, []
    by: dict[str, int] = {}
    kinds: dict[str, int] = {}
    queued: set[int] = set()
    for pos, lab in enumerate(current(labels)):
        i = index.get(lab.item)
        if i is None:
            unknown += 1
            if len(unknown_items) < SHOW_UNKNOWN:
                unknown_items.append(lab.item)
            continue
        (right if lab.correct else wrong)[i] = (right if lab.correct else wrong).get(i, 0) + 1
        by[lab.reviewer] = by.get(lab.reviewer, 0) + 1
        kinds[lab.kind] = kinds.get(lab.kind, 0) + 1
        if lab.kind == "queue":
            queued.add(i)
        t = (parse_time(lab.time), pos)
        if i not in arrival or t < arrival[i]:
            arrival[i] = t
    rows, correct, ties = [], [], 0
    for i in sorted(arrival, key=arrival.__getitem__):
        r, w = right.get(i, 0), wrong.get(i, 0)
        if r == w:
            ties += 1
            continue
        rows.append(i)
        correct.append(r > w)
    return Labelled(traffic, np.asarray(rows, dtype=int), np.asarray(correct, dtype=bool), ties, unknown,
                    tuple(unknown_items), tuple(sorted(by.items())), tuple(sorted(kinds.items())),
                    np.array([i in queued for i in rows], dtype=bool))


def from_rows(rows: Judgments, report: LoadReport, name: str) -> Traffic:
    """Traffic from a reader's rows read with ``LoadOptions(traffic=True)`` (their outcomes are
    placeholders): keys by :func:`calib.labels.records.item_keys` (the key the hosted review
    and ``calib labels export`` write), the stated value on the file's scale, the clusters."""
    keys = item_keys(rows)
    messages = [i.message() for i in report.issues[:MAX_MESSAGES]]
    if report.dropped > len(messages):
        messages.append(more_bad_lines_message(name, report.dropped - len(messages)))
    ids = [str(v) for v in rows.item_id]
    if len(rows) and all(ids) and str(keys[0]) != ids[0]:
        messages.append(f"{name}: item ids repeat or cannot be carried by a label; items are keyed by "
                        f"{str(keys[0]).split(' ')[0]} number (\"{keys[0]}\")")
    scale = rows.scale
    probs = None if scale.lo == 0 else np.asarray(rows.prob, dtype=float)
    return Traffic(name, keys, np.asarray(rows.stated, dtype=float), float(scale.hi), tuple(messages), probs,
                   rows.cluster, tuple(report.notes))


def load_traffic(path: str | Path, data: bytes | None = None, *, options: LoadOptions | None = None,
                 fmt: str = "auto") -> Traffic:
    """Traffic from any input ``calib audit`` reads (JSONL of stated confidences, option
    log-probs, lm-eval samples or an lm-eval output folder, an Inspect log, an eval platform's
    file, a HELM run folder, a folder holding MLflow's ``mlflow.db``), read by its reader with
    ``LoadOptions(traffic=True)``: rows without an outcome are kept. A CSV is read by
    :func:`read_traffic` (a CSV of items; a count table has no items to label)."""
    from calib.loading import folder_file, read_rows

    opts = replace(options or LoadOptions(), traffic=True)
    if data is None and Path(path).is_dir() and folder_file(path, data) is None:  # an lm-eval output folder
        from calib import clusters
        from calib.readers.lmeval import read_folder

        files = sorted(f for f in Path(path).iterdir() if f.is_file())
        rows, report = read_folder([(str(f), f.read_bytes()) for f in files], name=Path(path).name, options=opts)
        rows, report = clusters.infer(rows, report, opts)
        return from_rows(rows, report, Path(path).name)
    src, _, read = read_rows(path, data, options=opts, fmt=fmt)
    if read is None:
        return read_traffic(src.data, src.name, confidence_key=opts.confidence_key, id_key=opts.id_key,
                            options=opts)
    rows, report = read
    return from_rows(rows, report, src.name)


def load_labels(data: bytes, name: str, traffic: Traffic, options: LoadOptions | None = None
                ) -> tuple[Labelled, tuple[str, ...]]:
    """Read a labels file (:func:`calib.labels.records.read_labels`) and join it to ``traffic``."""
    labels, messages = read_labels(data, name, options=options)
    return join_labels(traffic, labels), messages


def as_traffic(traffic: Traffic | str | bytes | object, options: LoadOptions | None = None) -> Traffic:
    """``traffic`` as :class:`Traffic`: itself, or read from a path or from bytes (the Python API)."""
    if isinstance(traffic, Traffic):
        return traffic
    if isinstance(traffic, bytes):
        return load_traffic("traffic", traffic, options=options)
    if isinstance(traffic, str | Path):
        return load_traffic(str(traffic), options=options)
    raise CalibError(f"traffic must be a path, bytes or Traffic, got {type(traffic).__name__} "
                     "(a DataFrame: calib.load(df, traffic=True))")


def as_labelled(tr: Traffic, labels: Sequence[Label] | str | bytes | object,
                options: LoadOptions | None = None) -> Labelled:
    """``labels`` (a sequence of :class:`~calib.labels.records.Label`, a path or bytes) joined to ``tr``."""
    if isinstance(labels, bytes):
        return load_labels(labels, "labels", tr, options)[0]
    if isinstance(labels, str | Path):
        return load_labels(Path(labels).read_bytes(), Path(labels).name, tr, options)[0]
    if isinstance(labels, Sequence) and all(isinstance(x, Label) for x in labels):
        return join_labels(tr, labels)
    raise CalibError("labels must be a path, bytes or a sequence of calib.labels.records.Label")
