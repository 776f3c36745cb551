"""Reviewers' labels as data: the record, the key it is joined on, export and import.

Contract
--------
- :class:`Label` is one reviewer's verdict on one item of one dataset at one time: the
  judge's answer is right (``correct=True``) or wrong, with an optional short note, or
  ``unsure`` (then ``correct`` is kept but counts nowhere). Labels are append-only data: a
  changed mind is a new label, the history is the caller's (the hosted catalog keeps every
  row); :func:`current` picks the latest per reviewer.
- An adjudication is a label of kind ``"adjudication"`` (:data:`ADJUDICATION`): the final
  verdict on an item set by an owner or adjudicator (its ``reviewer``), never unsure; the
  latest per item wins (:func:`calib.labels.final.final_labels`), the earlier ones stay in
  the history.
- :func:`item_keys` is the key labels are joined on: the item id when a file's ids are
  usable, else ``"line N"``.
- :func:`labels_to_jsonl` / :func:`labels_to_csv` export, :func:`read_labels` imports
  either format back. Export then import is the identity on every valid label (see
  :func:`csv_cell` for the one CSV rule that makes it so).
- Every text is user data: a label's fields are checked by :func:`label_problem`
  (bounded, no NUL, no lone surrogate, a known kind, an ISO-8601 UTC time) wherever a
  label enters (import, the hosted page); nothing here is HTML, and a CSV cell is made
  spreadsheet-safe with :func:`calib.routing.spreadsheet_cell`.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.readers.base import BadLines, LoadOptions, megabytes
from calib.readers.jsonl import BOM, check_lines_cost, json_objects, too_long
from calib.routing import formula_like, spreadsheet_cell
from calib.rows import Judgments

#: The kind of an adjudication: the final label of an item, set by its adjudicator.
ADJUDICATION = "adjudication"
#: Where a label comes from: the review queue (below the threshold), the audit sample, or
#: an adjudication (:data:`ADJUDICATION`).
KINDS = ("queue", "audit", ADJUDICATION)
#: Longest note, characters.
MAX_NOTE_CHARS = 500
#: Longest reviewer identity (an e-mail or a typed name), characters.
MAX_REVIEWER_CHARS = 200
#: Longest item key or dataset name, characters (item ids longer than this are not used as keys).
MAX_KEY_CHARS = 1000
#: The columns of the CSV export, in order (also the keys of a JSONL line).
FIELDS = ("dataset", "item", "correct", "note", "reviewer", "time", "kind", "unsure", "judge_shown", "reasons")
#: The fields a labels file must have on every line (the others take :class:`Label`'s defaults).
REQUIRED = ("item", "correct", "reviewer", "time")
#: Most messages :func:`read_labels` returns (one per bad line; the rest are counted).
MAX_MESSAGES = 200

_BOOLS = ("correct", "unsure", "judge_shown")
#: Most reason tags on one label, and longest tag (the owner's tags obey the same rule).
MAX_REASON_TAGS = 20
MAX_TAG_CHARS = 60
#: How a CSV cell joins a label's reason tags (a tag holds no comma, so it splits back exactly).
TAG_JOIN = ", "
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
# characters a CSV or a terminal cannot carry back faithfully, refused in every field
_UNCARRIED = re.compile("[\ud800-\udfff\x00]")
# control characters refused in a one-line field (reviewer, dataset, kind); a note may hold newlines and tabs
_CONTROL = re.compile("[\x00-\x1f\x7f]")
#: Unicode categories a reviewer's name may not hold: controls (C0, DEL and C1, such as
#: NEL U+0085), format characters (the bidi embeddings, overrides, isolates and marks
#: U+202A-U+202E, U+2066-U+2069, U+200E/F, zero-width characters, the soft hyphen, the
#: BOM), line and paragraph separators (U+2028, U+2029) and lone surrogates.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def invisible_in_name(who: str) -> str | None:
    """Why the reviewer name ``who`` cannot be kept for a character of
    :data:`INVISIBLE_CATEGORIES` in it (``None`` when it has none): one that is not seen,
    or that reorders or breaks the text around it, lets one name pass for another in the
    labels, the export and the owner's tables, or ends a line where a reader does not
    expect it. The one rule of a label file's reviewer (:func:`label_problem`) and the
    hosted store's (:func:`calib.hosting.labels.check_reviewer`)."""
    bad = next((c for c in who if unicodedata.category(c) in INVISIBLE_CATEGORIES), None)
    if bad is None:
        return None
    name = unicodedata.name(bad, "") or "a control character"
    return (f"the reviewer's name contains U+{ord(bad):04X} ({name}), a character that is not "
            "seen or changes how the text around it reads: type the name without it")


@dataclass(frozen=True)
class Label:
    """One reviewer's verdict on one item.

    Attributes
    ----------
    item:
        The item key (:func:`item_keys`): what a label is joined on.
    correct:
        The reviewer says the judge's answer is right.
    note:
        A short note, ``""`` if none (at most :data:`MAX_NOTE_CHARS` characters).
    reviewer:
        The OIDC e-mail, or the name a password-only reviewer typed.
    time:
        When, ISO-8601 UTC (``"2026-12-01T18:30:00Z"``; :func:`now` writes one).
    kind:
        ``"queue"`` (from the review queue), ``"audit"`` (from the audit sample) or
        ``"adjudication"`` (the final label, :data:`ADJUDICATION`).
    dataset:
        The dataset (judge) name within a share; ``""`` when there is one.
    unsure:
        The reviewer could not tell: the label counts in no vote, agreement or estimate
        (``correct`` is kept as given). Labels written before this field are ``False``.
    judge_shown:
        The judge's stated confidence and the file's outcome were on the reviewer's card
        (the owner's "show the judge"; stamped by the server, never the reviewer's say).
        ``False``: a blind label. An adjudication records none (``False``).
    reasons:
        The reason tags the reviewer picked (each one line, no comma, at most
        :data:`MAX_TAG_CHARS` characters; at most :data:`MAX_REASON_TAGS`), ``()`` if none.
    """

    item: str
    correct: bool
    note: str = ""
    reviewer: str = ""
    time: str = ""
    kind: str = "queue"
    dataset: str = ""
    unsure: bool = False
    judge_shown: bool = False
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {f: list(self.reasons) if f == "reasons" else getattr(self, f) for f in FIELDS}


def now() -> str:
    """The current time as a label writes it (ISO-8601 UTC, whole seconds, ``Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """A label's time as an aware datetime; :class:`CalibError` when it is not ISO-8601 UTC."""
    if not isinstance(text, str) or not _TIME.match(text):
        raise CalibError(f"time must be ISO-8601 UTC like 2026-12-01T18:30:00Z, got {_show(text)}")
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00")
    except ValueError:
        raise CalibError(f"time is not a real date and time: {_show(text)}") from None


def tag_problem(tag: object) -> str | None:
    """Why ``tag`` cannot be a reason tag (``None`` when it can): non-empty text without
    leading or trailing space, at most :data:`MAX_TAG_CHARS` characters, no comma (a CSV
    cell joins the tags with :data:`TAG_JOIN`), no character of :data:`INVISIBLE_CATEGORIES`."""
    if not isinstance(tag, str) or not tag.strip() or tag != tag.strip() or len(tag) > MAX_TAG_CHARS:
        return f"a reason tag must be non-empty text of at most {MAX_TAG_CHARS} characters, got {_show(tag)}"
    if "," in tag:
        return f"reason tag {_show(tag)}: a tag cannot hold a comma"
    why = invisible_in_name(tag)
    return None if why is None else f"reason tag {_show(tag)}: " + why.replace("the reviewer's name", "the tag")


def _reasons_problem(label: Label) -> str | None:
    if not isinstance(label.judge_shown, bool):
        return f"judge_shown must be true or false, got {_show(label.judge_shown)}"
    if not isinstance(label.reasons, tuple):
        return f"reasons must be a list of tags, got {_show(label.reasons)}"
    if len(label.reasons) > MAX_REASON_TAGS:
        return f"{len(label.reasons):,} reason tags, over the {MAX_REASON_TAGS} allowed"
    if len(set(label.reasons)) != len(label.reasons):
        return "a reason tag is given twice"
    bad = next((w for w in map(tag_problem, label.reasons) if w is not None), None)
    if bad is not None:
        return bad
    if label.kind == ADJUDICATION and (label.judge_shown or label.reasons):
        return "an adjudication is the owner's final label: it records no judge shown and no reason tags"
    return None


def label_problem(label: Label) -> str | None:
    """Why ``label`` cannot be kept, in words (``None`` when it can).

    The rules: ``correct`` and ``unsure`` bools (an adjudication not unsure); ``item`` non-empty, at most :data:`MAX_KEY_CHARS`;
    ``note`` at most :data:`MAX_NOTE_CHARS` (newlines allowed); ``judge_shown`` a bool and
    ``reasons`` a tuple of distinct tags (:func:`tag_problem`), neither on an adjudication; ``reviewer`` non-empty,
    at most :data:`MAX_REVIEWER_CHARS`, no character of :data:`INVISIBLE_CATEGORIES`
    (:func:`invisible_in_name`); ``dataset`` at most
    :data:`MAX_KEY_CHARS`, one line; ``kind`` one of :data:`KINDS`; ``time`` ISO-8601
    UTC; no field holds NUL or a lone surrogate (a CSV could not give them back).
    """
    if not isinstance(label.correct, bool):
        return f"correct must be true or false, got {_show(label.correct)}"
    if not isinstance(label.unsure, bool):
        return f"unsure must be true or false, got {_show(label.unsure)}"
    for f in ("item", "note", "reviewer", "time", "kind", "dataset"):
        v = getattr(label, f)
        if not isinstance(v, str):
            return f"{f} must be text, got {type(v).__name__}"
        if _UNCARRIED.search(v):
            return f"{f} holds a NUL character or a lone surrogate, which labels may not carry"
    if not label.item:
        return "item is empty"
    for f, cap in (
        ("item", MAX_KEY_CHARS),
        ("dataset", MAX_KEY_CHARS),
        ("note", MAX_NOTE_CHARS),
        ("reviewer", MAX_REVIEWER_CHARS),
    ):
        v = getattr(label, f)
        if len(v) > cap:
            return f"{f} is {len(v):,} characters, over the {cap:,} allowed"
    if not label.reviewer.strip():
        return "reviewer is empty"
    if _CONTROL.search(label.dataset):
        return "dataset holds a control character (a newline or a tab)"
    invisible = invisible_in_name(label.reviewer)
    if invisible is not None:
        return invisible
    if label.kind not in KINDS:
        return f"kind must be 'queue', 'audit' or 'adjudication', got {_show(label.kind)}"
    if label.kind == ADJUDICATION and label.unsure:
        return "an adjudication is the final label: it says right or wrong, it cannot be unsure"
    why = _reasons_problem(label)
    if why is not None:
        return why
    try:
        parse_time(label.time)
    except CalibError as exc:
        return str(exc)
    return None


def check_label(label: Label) -> Label:
    """``label`` itself, or :class:`CalibError` with :func:`label_problem`'s reason."""
    why = label_problem(label)
    if why is not None:
        raise CalibError(f"label of item {_show(label.item)}: {why}")
    return label


def _show(value: object, limit: int = 60) -> str:
    """A value quoted for a message, cut short (user text: never more than ``limit``)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ------------------------------------------------------------------ the join key
def item_keys(rows: Judgments) -> np.ndarray:
    """The key of each row, what labels are joined on.

    The row's item id when the file's ids are all non-empty, unique, at most
    :data:`MAX_KEY_CHARS` characters and free of NUL and lone surrogates (a label must
    be able to carry its key through a CSV); otherwise ``"line N"`` for every row, ``N``
    the row's 1-based line (:attr:`calib.rows.Judgments.line`); when lines repeat too (a
    folder of several files without ids), ``"row N"``, ``N`` the row's 1-based position as
    loaded. One rule for the whole file, so a key never mixes ids and lines.
    """
    n = len(rows)
    ids = np.asarray(rows.item_id, dtype=object) if len(rows.item_id) == n else None
    if ids is not None and n:
        as_text = [str(v) for v in ids]
        usable = all(s and len(s) <= MAX_KEY_CHARS and not _UNCARRIED.search(s) for s in as_text)
        if usable and len(set(as_text)) == n:
            return np.array(as_text, dtype=object)
    lines = np.asarray(rows.line)
    if np.unique(lines).size == n:
        return np.array([f"line {int(x)}" for x in lines], dtype=object)
    return np.array([f"row {i}" for i in range(1, n + 1)], dtype=object)


# ------------------------------------------------------------------ history
def current(labels: Iterable[Label]) -> tuple[Label, ...]:
    """The latest label per (dataset, item, reviewer), in the order they first appear.

    Latest by :attr:`Label.time` (compared as instants, so ``...:00Z`` and
    ``...:00.000Z`` are equal); a tie goes to the label that comes later in ``labels``.
    """
    best: dict[tuple[str, str, str], tuple[datetime, int, Label]] = {}
    first: dict[tuple[str, str, str], int] = {}
    for i, lab in enumerate(labels):
        key = (lab.dataset, lab.item, lab.reviewer)
        t = parse_time(lab.time)
        first.setdefault(key, i)
        held = best.get(key)
        if held is None or (t, i) >= (held[0], held[1]):
            best[key] = (t, i, lab)
    return tuple(best[k][2] for k in sorted(best, key=first.__getitem__))


def for_dataset(labels: Sequence[Label], dataset: str | None) -> tuple[Label, ...]:
    """The labels of one dataset. ``dataset=None``: all of them, when they name one
    dataset only; labels of several datasets then need a choice (:class:`CalibError`)."""
    if dataset is not None:
        return tuple(lab for lab in labels if lab.dataset == dataset)
    names = sorted({lab.dataset for lab in labels})
    if len(names) > 1:
        shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
        raise CalibError(f"the labels are of {len(names)} datasets ({shown}): say which one")
    return tuple(labels)


# ------------------------------------------------------------------ export
def labels_to_jsonl(labels: Iterable[Label]) -> bytes:
    """One JSON object per line (keys :data:`FIELDS`), UTF-8, characters as they are
    (``ensure_ascii=False``: an emoji stays an emoji; JSON escapes newlines)."""
    out = [json.dumps(check_label(lab).to_dict(), ensure_ascii=False) + "\n" for lab in labels]
    return "".join(out).encode("utf-8")


def csv_cell(text: str) -> str:
    """A text cell of the CSV export, safe in a spreadsheet and given back exactly.

    :func:`calib.routing.spreadsheet_cell` puts an apostrophe before a formula-like cell
    (``=1+1`` is written ``'=1+1``); a text that itself starts with an apostrophe gets
    one more (``'ok`` is written ``''ok``). So an exported cell starts with an apostrophe
    exactly when one was added, and :func:`csv_uncell` removes it: a leading apostrophe
    followed by a formula-like text or by another apostrophe. (NUL and lone surrogates,
    which ``spreadsheet_cell`` would replace, are refused in labels.)
    """
    return "'" + text if text.startswith("'") else str(spreadsheet_cell(text))


def csv_uncell(cell: str) -> str:
    """The text :func:`csv_cell` wrote ``cell`` for."""
    if cell.startswith("'") and (cell[1:].startswith("'") or formula_like(cell[1:])):
        return cell[1:]
    return cell


def labels_to_csv(labels: Iterable[Label]) -> bytes:
    """A header (:data:`FIELDS`) and one row per label, UTF-8; every text cell through
    :func:`csv_cell` and quoted (``csv.QUOTE_NONNUMERIC``, as
    :func:`calib.routing.queue_to_csv`), so a newline inside a note stays in its cell;
    ``correct``, ``unsure`` and ``judge_shown`` are written ``true`` / ``false``, the reason
    tags joined by :data:`TAG_JOIN` in one cell."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    w.writerow(FIELDS)
    for lab in labels:
        check_label(lab)
        w.writerow(
            [
                ("true" if getattr(lab, f) else "false") if f in _BOOLS
                else csv_cell(TAG_JOIN.join(lab.reasons)) if f == "reasons" else csv_cell(getattr(lab, f))
                for f in FIELDS
            ]
        )
    return buf.getvalue().encode("utf-8")


# ------------------------------------------------------------------ import
def read_labels(
    data: bytes, name: str, *, options: LoadOptions | None = None
) -> tuple[tuple[Label, ...], tuple[str, ...]]:
    """Labels from a JSONL or CSV export (:func:`labels_to_jsonl`, :func:`labels_to_csv`).

    The format is sniffed: JSONL when the first non-blank character is ``{``, else CSV
    with a header naming at least ``item`` and ``correct`` (missing optional columns take
    :class:`Label`'s defaults, except ``reviewer`` and ``time``, which every label needs).
    Limits are checked before anything is parsed, as for a judgments file
    (:class:`~calib.readers.base.LoadOptions`: the decompressed size, the line count
    and the parse cost, then each line's length).

    Returns
    -------
    labels, messages:
        The valid labels in file order, and one message per bad line naming it and the
        reason (``"labels.csv line 7: correct must be true or false, got 'maybe'"``), at
        most :data:`MAX_MESSAGES` (then one saying how many more).

    Raises
    ------
    CalibError
        The file is over a limit, not UTF-8 as a whole (CSV), or a CSV without the
        header it needs.
    """
    opts = options or LoadOptions()
    if len(data) > opts.max_decompressed_bytes:
        raise CalibError(
            f"{name}: {megabytes(len(data))} MB, over the {megabytes(opts.max_decompressed_bytes)} MB "
            "a labels file may hold"
        )
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    if lines > opts.max_rows:
        raise CalibError(
            f"{name}: more than {opts.max_rows:,} lines; refused (raise CALIB_MAX_ROWS if this "
            "file is genuine)"
        )
    check_lines_cost(data, name, opts)
    data = data.removeprefix(BOM)
    msgs = BadLines(name, MAX_MESSAGES)
    labels = _read_jsonl(data, opts, msgs) if data.lstrip()[:1] == b"{" else _read_csv(data, opts, msgs)
    return tuple(labels), msgs.messages()


def _read_jsonl(data: bytes, opts: LoadOptions, msgs: BadLines) -> list[Label]:
    out: list[Label] = []
    for no, obj in json_objects(data, opts.max_line_chars, msgs.add):
        lab = _label_of(obj, no, msgs, from_csv=False)
        if lab is not None:
            out.append(lab)
    return out


def _read_csv(data: bytes, opts: LoadOptions, msgs: BadLines) -> list[Label]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CalibError(
            f"{msgs.name} line {line}: bytes that are not UTF-8 (neither JSONL nor a UTF-8 CSV)"
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise CalibError(f"{msgs.name} line 1: the CSV header cannot be read ({exc})") from None
    if header is None:
        return []
    header = [h.strip() for h in header]
    missing = [f for f in REQUIRED if f not in header]
    if missing:
        raise CalibError(
            f"{msgs.name} line 1: not a labels file: the header {_show(header, 120)} lacks "
            + ", ".join(missing)
            + " (JSONL lines start with '{'; a CSV needs a header row)"
        )
    unknown = [h for h in header if h not in FIELDS]
    if unknown:
        msgs.add(1, "columns not read: " + ", ".join(_show(h) for h in unknown[:5]))
    out: list[Label] = []
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            msgs.add(start, f"the CSV row cannot be read ({exc})")
            break  # the reader cannot find the next row's start after a broken quote
        no, start = start, reader.line_num + 1
        if not any(c.strip() for c in row):
            continue
        if sum(len(c) for c in row) > opts.max_line_chars:
            msgs.add(no, too_long(sum(len(c) for c in row), opts.max_line_chars))
            continue
        if len(row) != len(header):
            msgs.add(no, f"{len(row)} cells where the header has {len(header)}")
            continue
        lab = _label_of(dict(zip(header, row, strict=True)), no, msgs, from_csv=True)
        if lab is not None:
            out.append(lab)
    return out


def _label_of(obj: dict[str, Any], no: int, msgs: BadLines, *, from_csv: bool) -> Label | None:
    """A label from one line's fields, or ``None`` after reporting why not."""
    fields: dict[str, Any] = {}
    for f in FIELDS:
        if f not in obj:
            if f in REQUIRED:
                msgs.add(no, f"{f} is missing")
                return None
            continue
        v = obj[f]
        if f in _BOOLS:
            v = _bool_of(v, from_csv)
            if v is None:
                msgs.add(no, f"{f} must be true or false, got {_show(obj[f])}")
                return None
        elif f == "reasons":
            v = _tags_of(v, from_csv)
            if v is None:
                msgs.add(no, f"reasons must be a list of tags{' (a CSV cell: tags joined by commas)' if from_csv else ''}"
                         f", got {_show(obj[f])}")
                return None
        elif not isinstance(v, str):
            msgs.add(no, f"{f} must be text, got {_show(v)}")
            return None
        elif from_csv:
            v = csv_uncell(v)
        fields[f] = v
    lab = Label(**fields)
    why = label_problem(lab)
    if why is not None:
        msgs.add(no, why)
        return None
    return lab


def _tags_of(v: Any, from_csv: bool) -> tuple[str, ...] | None:
    """Reason tags: a JSON list of strings, or in a CSV one cell of tags joined by
    :data:`TAG_JOIN` (empty: none). Each tag is checked later, by :func:`label_problem`."""
    if from_csv and isinstance(v, str):
        text = csv_uncell(v)
        return tuple(t.strip() for t in text.split(",")) if text.strip() else ()
    if isinstance(v, list) and all(isinstance(t, str) for t in v):
        return tuple(v)
    return None


def _bool_of(v: Any, from_csv: bool) -> bool | None:
    """``true`` / ``false``: a JSON boolean, or in a CSV the words (any case)."""
    if isinstance(v, bool):
        return v
    if from_csv and isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    return None
