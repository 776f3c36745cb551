"""The per-line reference path: Python's ``json`` and the value rules, one line at a time.

Also the pieces both paths produce (:class:`_Part`) and the reading context (:class:`_Ctx`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from calib.loadreport import EXAMPLES_PER_REASON, IssueLog, LineIssue, preview_of
from calib.readers.base import LoadOptions
from calib.readers.jsonl import (
    BOM,
    R_JSON,
    R_NOT_OBJECT,
    R_TOO_LONG,
    R_TRUNCATED,
    R_UTF8,
    JsonLimitError,
    big_int,
    cluster_label,
    cut_off,
    json_loads,
    not_json,
    not_utf8,
    too_long,
)
from calib.readers.stated.fields import _Fields
from calib.readers.stated.rules import (
    _CONF_REASON,
    _MISSING,
    _OK,
    _OUT_REASON,
    MISSING_GROUP,
    R_DUPLICATE,
    R_MISSING_OUTCOME,
    _conf_detail,
    _conf_value,
    _get,
    _label,
    _matches,
    _outcome_detail,
    _outcome_value,
    _show,
    _text,
)
from calib.verbal import R_NUMBER_AMONG_PHRASES, R_UNKNOWN_PHRASE, PhraseBook

if TYPE_CHECKING:  # pyarrow is imported only by files big enough for the fast path
    import pyarrow.json as pj


# ------------------------------------------------------------- parsed pieces
@dataclass
class _Part:
    """Rows that passed every check but the scale, and the issues of one piece."""

    line: np.ndarray
    conf: np.ndarray
    pct: np.ndarray
    correct: np.ndarray
    item_id: np.ndarray
    group: np.ndarray | None
    text: np.ndarray | None
    issues: list[LineIssue] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    blank: int = 0
    #: Each row's ``--cluster-key`` value (:func:`calib.readers.jsonl.cluster_label`), when read.
    cluster: np.ndarray | None = None


@dataclass(frozen=True)
class _Ctx:
    name: str
    options: LoadOptions
    fields: _Fields
    last_line: int
    unterminated: bool
    parse_options: pj.ParseOptions | None


#: The characters a JSON text can start with (after the blanks :meth:`_Slow.line` strips).
_JSON_STARTS = frozenset('{["-0123456789tfnNI \t\r')


class _Slow:
    """The per-line reference path: Python's ``json`` and the value rules."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.ex = IssueLog()
        self.blank = 0
        self.rows: list[tuple[int, float, bool, bool, str, str, str, str | None]] = []

    def bad(self, no: int, fld: str | None, reason: str, detail: str, text: str) -> None:
        if self.ex.counts[reason] >= EXAMPLES_PER_REASON:  # counted only: no example kept
            self.ex.counts[reason] += 1
            return
        self.ex.add(LineIssue(no, fld, reason, detail, preview_of(text), self.ctx.name))

    def line(self, raw: bytes, no: int) -> None:
        ctx, f = self.ctx, self.ctx.fields
        if raw.startswith(BOM):
            raw = raw[3:]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip(b" \t\r"):
            self.blank += 1
            return
        limit = ctx.options.max_line_chars
        if len(raw) > limit:
            self.bad(no, None, R_TOO_LONG, too_long(len(raw), limit),
                     raw[:400].decode("utf-8", "replace"))
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.bad(no, None, R_UTF8, not_utf8(exc),
                     raw.decode("utf-8", "replace"))
            return
        if text[0] not in _JSON_STARTS and self.ex.counts[R_JSON] >= EXAMPLES_PER_REASON and not (
                no == ctx.last_line and ctx.unterminated):
            # surely not JSON (no JSON value starts so) and its examples are full: counted unparsed
            self.ex.counts[R_JSON] += 1
            return
        try:
            obj = json_loads(text)
        except JsonLimitError as exc:  # valid JSON, but nested deeper than Python reads
            self.bad(no, None, R_JSON, f"cannot be read: {exc}", text)
            return
        except json.JSONDecodeError as exc:
            if no == ctx.last_line and ctx.unterminated and _cut_off(text, exc):
                self.bad(no, None, R_TRUNCATED, cut_off(exc), text)
            else:
                self.bad(no, None, R_JSON, not_json(exc), text)
            return
        if not isinstance(obj, dict):
            self.bad(no, None, R_NOT_OBJECT, f"expected a JSON object {{...}}, got {_kind(obj)}", text)
            return
        dup = _duplicate(text, f)
        if dup is not None:
            self.bad(no, dup, R_DUPLICATE, f"{dup!r} is given twice in one object: which value is meant is "
                     "unclear (Python's json would keep the last one silently)", text)
            return
        cv = _get(obj, f.confidence.path)
        st, x, pct = _conf_value(cv) if f.phrases is None else _phrase_value(cv, f.phrases)
        if st == _NOT_PHRASE and f.phrases is not None:
            self.bad(no, f.confidence.name, *_phrase_issue(cv, f.confidence.name, f.phrases), text)
            return
        if st != _OK:
            self.bad(no, f.confidence.name, _CONF_REASON[st], _conf_detail(st, f.confidence.name, cv), text)
            return
        if f.outcome is not None:
            ov = _get(obj, f.outcome.path)
            ost, y = _outcome_value(ov)
            if ost != _OK:
                self.bad(no, f.outcome.name, _OUT_REASON[ost], _outcome_detail(ost, f.outcome.name, ov), text)
                return
        elif f.pred is None or f.gold is None:  # traffic: no outcome read
            y = False
        else:
            pv, gv = _get(obj, f.pred.path), _get(obj, f.gold.path)
            for key, v in ((f.pred, pv), (f.gold, gv)):
                if v is None:
                    self.bad(no, key.name, R_MISSING_OUTCOME, _outcome_detail(_MISSING, key.name, v), text)
                    return
            y = _matches(pv, gv)
        iv = None if f.item_id is None else _get(obj, f.item_id.path)
        gv2 = None if f.group is None else _get(obj, f.group.path)
        tv = None if f.text is None else _get(obj, f.text.path)
        cl = None if f.cluster is None else cluster_label(_get(obj, f.cluster.path))
        self.rows.append((
            no, x + 0.0, pct, y, "" if iv is None else _label(iv),
            MISSING_GROUP if gv2 is None else _label(gv2), _text(tv), cl,
        ))

    def part(self) -> _Part:
        f = self.ctx.fields
        cols = list(zip(*self.rows, strict=True)) if self.rows else [()] * 8
        return _Part(
            line=np.array(cols[0], dtype=np.int64),
            conf=np.array(cols[1], dtype=np.float64),
            pct=np.array(cols[2], dtype=bool),
            correct=np.array(cols[3], dtype=bool),
            item_id=np.array(cols[4], dtype=object),
            group=None if f.group is None else np.array(cols[5], dtype=object),
            text=None if f.text is None else np.array(cols[6], dtype=object),
            cluster=None if f.cluster is None else np.array(cols[7], dtype=object),
            issues=self.ex.kept, counts=self.ex.counts, blank=self.blank,
        )


#: Status of a confidence that is no phrase of the book, on a file read as phrases.
_NOT_PHRASE = -1


def _phrase_value(v: Any, book: PhraseBook) -> tuple[int, float, bool]:
    """``(status, code, False)`` of a confidence on a file of phrases: the phrase's code
    in ``book`` (:mod:`calib.verbal`; ranks come once every line is read)."""
    if v is None:
        return _MISSING, math.nan, False
    code = book.code(v)
    return (_NOT_PHRASE, math.nan, False) if code is None else (_OK, float(code), False)


def _phrase_issue(v: Any, name: str, book: PhraseBook) -> tuple[str, str]:
    """The reason and detail of a confidence that is no known phrase: the phrase named."""
    if _conf_value(v)[0] == _OK:
        return R_NUMBER_AMONG_PHRASES, (f"{name} is {_show(v)}, a number in a file of phrases; "
                                        f"give a phrase of {book.known()}")
    return R_UNKNOWN_PHRASE, (f"{name} is {_show(v)}, a phrase on none of "
                              f"{book.known()}; give the order with --phrases")


def _duplicate(text: str, f: _Fields) -> str | None:
    """The first field deciding the row (confidence, outcome, prediction, gold) named
    twice in one object of ``text``, or ``None``. A count of the quoted name first, so
    almost every line costs one ``str.count`` per field; the pyarrow path refuses such
    lines itself ("specified twice"), so both paths report them alike."""
    keys = [k.path[-1] for k in (f.confidence, f.outcome, f.pred, f.gold) if k is not None]
    if not any(text.count(json.dumps(k, ensure_ascii=False)) > 1 for k in keys):
        return None
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        names = [k for k, _ in items]
        found.extend(k for k in keys if names.count(k) > 1)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs, parse_int=big_int)
    return found[0] if found else None


def _kind(obj: Any) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "true/false"
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(type(obj), "a value")


def _cut_off(text: str, exc: json.JSONDecodeError) -> bool:
    """Did the parser run out of text (rather than meet a wrong character)?"""
    body = text.rstrip()
    if exc.msg.startswith("Unterminated string") or exc.pos >= len(body):
        return True
    rest = body[exc.pos:]
    return any(w.startswith(rest) for w in ("true", "false", "null", "NaN", "Infinity", "-Infinity"))


def _slow(lines: Sequence[bytes], numbers: Sequence[int], ctx: _Ctx) -> _Part:
    s = _Slow(ctx)
    for raw, no in zip(lines, numbers, strict=True):
        s.line(raw, int(no))
    return s.part()
