"""The columnar fast path: whole chunks of clean lines parsed by pyarrow's JSON reader.

Values are judged by the same rule functions as the per-line path, once per distinct
value; values whose Python reading could differ are handed back to be re-read.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from calib.loadreport import EXAMPLES_PER_REASON, IssueLog, LineIssue, preview_of
from calib.readers.stated.fields import _Fields, _Key, _Sample
from calib.readers.stated.rules import (
    _BAD,
    _CONF_REASON,
    _MISSING,
    _NON_NUMERIC,
    _NOT_FINITE,
    _OK,
    _OUT_REASON,
    MISSING_GROUP,
    R_MISSING_OUTCOME,
    TEXT_CHARS,
    _answer_key,
    _conf_detail,
    _conf_value,
    _outcome_detail,
    _outcome_value,
)
from calib.readers.stated.slow import _Ctx, _Part

_ROW_HINT = re.compile(r" in row (\d+)")
#: |x| from which a float64 may not equal the integer Python's json would read.
_EXACT_INT = 2.0**53


def _schema(fields: _Fields, sample: _Sample) -> pj.ParseOptions | None:
    """An explicit pyarrow schema of the used fields, typed by the sampled values'
    commonest kind; ``None`` (no fast path) when a kind has no safe arrow type."""
    tree: dict[str, Any] = {}
    for role, key in fields.used():
        kind = _kind_of(sample.values.get(key.path, []), role)
        if kind is None:
            return None
        node = tree
        for p in key.path[:-1]:
            nxt = node.setdefault(p, {})
            if not isinstance(nxt, dict):
                return None
            node = nxt
        old = node.get(key.path[-1])
        if isinstance(old, dict) or (old is not None and old != kind):
            return None
        node[key.path[-1]] = kind

    def build(node: dict[str, Any]) -> list[pa.Field]:
        return [pa.field(k, pa.struct(build(v)) if isinstance(v, dict) else v) for k, v in node.items()]

    return pj.ParseOptions(explicit_schema=pa.schema(build(tree)), unexpected_field_behavior="ignore")


def _kind_of(values: list[Any], role: str) -> pa.DataType | None:
    kinds = Counter(
        "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"
        if isinstance(v, float) else "str" if isinstance(v, str) else "other"
        for v in values
    )
    if not kinds:
        return pa.string() if role in ("group", "item_id", "text", "cluster") else pa.float64()
    top = kinds.most_common(1)[0][0]
    if role == "cluster":  # as text only: pyarrow's text of a number can differ from Python's str
        return pa.string() if top == "str" else None
    if role == "text":
        return pa.string()
    if top == "str":
        return pa.string()
    if top == "other":
        return None
    if role in ("group", "item_id"):
        return pa.int64() if top == "int" else None
    if top == "bool":
        return None if role == "confidence" else pa.bool_()
    if role in ("confidence",) or kinds["float"]:
        return pa.float64()
    return pa.int64()


class _Redo(Exception):
    """pyarrow could not take a piece; ``row`` is the failing line when known."""

    def __init__(self, row: int | None) -> None:
        super().__init__(row)
        self.row = row


def _column(tb: pa.Table, path: tuple[str, ...]) -> pa.Array:
    col = tb.column(path[0]).combine_chunks()
    for p in path[1:]:
        col = pc.struct_field(col, [p])
    return col


def _numpy(col: pa.Array) -> np.ndarray:
    """A boolean or numeric arrow array without nulls as a new numpy array, read from
    its buffers. (``Array.to_numpy`` goes through pyarrow's pandas conversion, which
    imports pandas, 0.2 s, on its first call.)"""
    if col.null_count:
        raise ValueError("_numpy: fill the nulls first")
    n, t = len(col), col.type
    if pa.types.is_boolean(t):
        if n == 0:
            return np.zeros(0, dtype=bool)
        bits = np.unpackbits(np.frombuffer(col.buffers()[1], dtype=np.uint8), bitorder="little")
        return bits[col.offset:col.offset + n].astype(bool)
    kind = "f" if pa.types.is_floating(t) else "i" if pa.types.is_signed_integer(t) else "u"
    if not (pa.types.is_floating(t) or pa.types.is_integer(t)):
        raise TypeError(f"_numpy: {t} is not boolean or numeric")
    dtype = np.dtype(f"<{kind}{t.bit_width // 8}")
    if n == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(col.buffers()[1], dtype=dtype, count=n, offset=col.offset * dtype.itemsize).copy()


def _filled(col: pa.Array, value: Any) -> pa.Array:
    """``col`` with its nulls replaced by ``value``; ``col`` itself when it has none
    (``pc.fill_null`` makes ``value`` an arrow scalar, which imports pandas, 0.2 s)."""
    return pc.fill_null(col, value) if col.null_count else col


def _uniques(col: pa.Array) -> tuple[list[Any], np.ndarray]:
    """Distinct values (as Python values) and each row's index into them (-1: null)."""
    if pa.types.is_null(col.type):
        return [], np.full(len(col), -1, dtype=np.int64)
    d = col.dictionary_encode()
    idx = _numpy(_filled(d.indices, -1)).astype(np.int64)
    return d.dictionary.to_pylist(), idx


def _check_exact(values: list[Any]) -> np.ndarray:
    """Which distinct values are floats too large to be sure they match Python's int."""
    return np.array([isinstance(v, float) and abs(v) >= _EXACT_INT for v in values], dtype=bool)


def _strings(col: pa.Array, fill: str) -> np.ndarray:
    """A string/int64 column as an array of str (nulls -> ``fill``)."""
    if pa.types.is_null(col.type):
        return np.full(len(col), fill, dtype=object)
    if not pa.types.is_string(col.type):
        col = pc.cast(col, pa.string())
    col = _filled(col, fill)
    if len(col) and pc.all(pc.string_is_ascii(col)).as_py():
        width = max(1, pc.max(pc.binary_length(col)).as_py() or 0)
        padded = pc.utf8_rpad(col, width=width, padding="\x00")
        buf = padded.buffers()[2]
        start = padded.offset * width
        raw = np.frombuffer(buf, dtype=np.uint8, count=len(col) * width, offset=start)
        # ASCII bytes are their own code points: widen to UCS-4 in one step
        return raw.astype(np.uint32).view(f"<U{width}")
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)


@dataclass
class _Judged:
    """The columns of one piece judged by the value rules.

    ``status`` is 0 for a usable row, else a code: 1.. a confidence issue (the rules'
    status), 10 + status an outcome issue, 20/21 a missing prediction/gold. ``field_of``
    and ``value_of`` give, per code, the field and each row's raw value for the message.
    """

    n: int
    status: np.ndarray
    x: np.ndarray
    pct: np.ndarray
    y: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    redo: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    field_of: dict[int, _Key] = field(default_factory=dict)
    value_of: dict[int, Callable[[int], Any]] = field(default_factory=dict)


def _fast(buf: bytes, numbers: np.ndarray, ctx: _Ctx) -> tuple[_Part, np.ndarray]:
    """Parse ``buf`` (one clean line per entry of ``numbers``) with pyarrow.

    Returns the part and the row positions whose values must be re-read line by line
    (floats beyond 2**53 in a used field). Raises :class:`_Redo` when pyarrow refuses
    the piece or does not return one row per line.
    """
    tb = _arrow_table(buf, len(numbers), ctx)
    f = ctx.fields
    j = _judge_confidence(_column(tb, f.confidence.path), f.confidence)
    if f.outcome is not None:
        _judge_outcome(j, _column(tb, f.outcome.path), f.outcome)
    elif f.pred is not None and f.gold is not None:  # else traffic: no outcome read, j.y stays False
        _judge_derived(j, _column(tb, f.pred.path), _column(tb, f.gold.path), f.pred, f.gold)
    # rows re-read line by line are taken out of this part
    ex = _examples(j, buf, numbers, ctx.name)
    ok = (j.status == _OK) & ~j.redo
    # every row usable (the common chunk): the columns as they are, not a copy of each
    good: np.ndarray | slice = slice(None) if ok.all() else ok
    ids, groups, texts = _labels(tb, f, j.n)
    part = _Part(
        line=numbers[good], conf=j.x[good] + 0.0, pct=j.pct[good], correct=j.y[good], item_id=ids[good],
        group=None if groups is None else groups[good], text=None if texts is None else texts[good],
        issues=ex.kept, counts=ex.counts,
        cluster=None if f.cluster is None else _cluster_labels(_column(tb, f.cluster.path))[good],
    )
    return part, np.flatnonzero(j.redo)


def _arrow_table(buf: bytes, n: int, ctx: _Ctx) -> pa.Table:
    """``buf`` read by pyarrow with the explicit schema; :class:`_Redo` unless one row a line."""
    assert ctx.parse_options is not None
    try:
        tb = pj.read_json(
            pa.py_buffer(buf),
            read_options=pj.ReadOptions(use_threads=False, block_size=max(len(buf) + 1, 4096)),
            parse_options=ctx.parse_options,
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        m = _ROW_HINT.search(str(exc))
        raise _Redo(int(m.group(1)) if m and int(m.group(1)) < n else None) from None
    if tb.num_rows != n:
        raise _Redo(None)
    return tb


def _judge_confidence(ccol: pa.Array, key: _Key) -> _Judged:
    """The confidence column judged by :func:`_conf_value` (floats without it, in numpy)."""
    n = len(ccol)
    redo = np.zeros(n, dtype=bool)
    pct = np.zeros(n, dtype=bool)
    if pa.types.is_floating(ccol.type) or pa.types.is_null(ccol.type):
        null = _numpy(ccol.is_null())
        x = (np.full(n, math.nan) if pa.types.is_null(ccol.type)
             else _numpy(_filled(ccol, math.nan)).astype(np.float64))
        fin = np.isfinite(x)
        cst = np.where(null, _MISSING, np.where(fin, _OK, _NOT_FINITE)).astype(np.int8)
        # NaN, an overflowing literal or an integer beyond 2**53 may read differently
        # in Python (an int, an error): those few lines are re-read the per-line way
        with np.errstate(invalid="ignore"):
            redo |= ~null & ~(np.abs(x) < _EXACT_INT)

        def cval(i: int, x: np.ndarray = x, null: np.ndarray = null) -> Any:
            return None if null[i] else float(x[i])
    else:
        uv, ui = _uniques(ccol)
        rules = [_conf_value(v) for v in uv] + [(_MISSING, math.nan, False)]
        cst = np.array([r[0] for r in rules], dtype=np.int8)[ui]
        x = np.array([r[1] for r in rules], dtype=np.float64)[ui]
        pct = np.array([r[2] for r in rules], dtype=bool)[ui]

        def cval(i: int, uv: list[Any] = uv, ui: np.ndarray = ui) -> Any:
            return None if ui[i] < 0 else uv[ui[i]]
    codes = (_MISSING, _NON_NUMERIC, _NOT_FINITE)
    return _Judged(n=n, status=cst.astype(np.int8), x=x, pct=pct, y=np.zeros(n, dtype=bool), redo=redo,
                   field_of={int(s): key for s in codes}, value_of={int(s): cval for s in codes})


def _judge_outcome(j: _Judged, ocol: pa.Array, key: _Key) -> None:
    """The outcome column judged by :func:`_outcome_value`, into ``j``."""
    if pa.types.is_boolean(ocol.type):
        y = _numpy(_filled(ocol, False)).astype(bool)
        null = _numpy(ocol.is_null())
        ost = np.where(null, _MISSING, _OK).astype(np.int8)
        uv2: list[Any] = [True, False]
        ui2 = np.where(null, -1, np.where(y, 0, 1))
    else:
        uv2, ui2 = _uniques(ocol)
        j.redo |= np.append(_check_exact(uv2), False)[ui2]
        rules2 = [_outcome_value(v) for v in uv2] + [(_MISSING, False)]
        ost = np.array([r[0] for r in rules2], dtype=np.int8)[ui2]
        y = np.array([r[1] for r in rules2], dtype=bool)[ui2]

    def oval(i: int, uv: list[Any] = uv2, ui: np.ndarray = ui2) -> Any:
        return None if ui[i] < 0 else uv[ui[i]]
    more = (j.status == _OK) & (ost != _OK)
    j.status[more] = 10 + ost[more]
    for s in (_MISSING, _BAD):
        j.field_of[10 + s] = key
        j.value_of[10 + s] = oval
    j.y = y


def _judge_derived(j: _Judged, pcol: pa.Array, gcol: pa.Array, pred: _Key, gold: _Key) -> None:
    """The outcome derived from a prediction and a gold column (:func:`_answer_key`), into ``j``."""
    codes: dict[str, int] = {}
    keyed = []
    for col in (pcol, gcol):
        uv3, ui3 = _uniques(col)
        j.redo |= np.append(_check_exact(uv3), False)[ui3]
        keyed.append((uv3, ui3))
    pv, pi = keyed[0]
    gv, gi = keyed[1]
    pcode = np.array([codes.setdefault(_answer_key(v), len(codes)) for v in pv] + [-1], dtype=np.int64)[pi]
    gcode = np.array([codes.setdefault(_answer_key(v), len(codes)) for v in gv] + [-2], dtype=np.int64)[gi]
    j.y = pcode == gcode
    pm = (j.status == _OK) & (pi < 0)
    j.status[pm] = 20
    gm = (j.status == _OK) & (gi < 0)
    j.status[gm] = 21
    j.field_of[20], j.field_of[21] = pred, gold
    j.value_of[20] = j.value_of[21] = lambda i: None


def _examples(j: _Judged, buf: bytes, numbers: np.ndarray, name: str) -> IssueLog:
    """The bad rows of ``j`` (not those re-read line by line) as counted issues with examples."""
    lines_of: list[bytes] | None = None

    def raw_line(i: int) -> bytes:
        nonlocal lines_of
        if lines_of is None:
            lines_of = buf.split(b"\n")
        r = lines_of[i]
        return r[:-1] if r.endswith(b"\r") else r

    ex = IssueLog()
    bad = np.flatnonzero((j.status != _OK) & ~j.redo)
    if not bad.size:
        return ex
    for code in np.unique(j.status[bad]):
        rows = bad[j.status[bad] == code]
        reason = (
            _CONF_REASON[int(code)] if code < 10 else _OUT_REASON[int(code) - 10]
            if code < 20 else R_MISSING_OUTCOME
        )
        key = j.field_of[int(code)]
        for i in rows[:EXAMPLES_PER_REASON]:
            v = j.value_of[int(code)](int(i))
            if code < 10:
                detail = _conf_detail(int(code), key.name, v)
            elif code < 20:
                detail = _outcome_detail(int(code) - 10, key.name, v)
            else:
                detail = _outcome_detail(_MISSING, key.name, None)
            ex.kept.append(LineIssue(
                int(numbers[i]), key.name, reason, detail,
                preview_of(raw_line(int(i)).decode("utf-8")), name,
            ))
        ex.counts[reason] += int(rows.size)
    return ex


def _cluster_labels(col: pa.Array) -> np.ndarray:
    """A string column's values, ``None`` where null, as :func:`calib.readers.jsonl.cluster_label`
    reads them on the per-line path (the schema types a cluster field as text only, :func:`_kind_of`)."""
    if pa.types.is_null(col.type):
        return np.full(len(col), None, dtype=object)
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)


def _labels(tb: pa.Table, f: _Fields, n: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The id, group and text columns of every row (``""``, :data:`MISSING_GROUP`, ``""``
    where absent), texts cut to :data:`TEXT_CHARS` as :func:`_text` does."""
    ids = (np.full(n, "", dtype=object) if f.item_id is None
           else _strings(_column(tb, f.item_id.path), ""))
    groups = None if f.group is None else _strings(_column(tb, f.group.path), MISSING_GROUP)
    texts = None
    if f.text is not None:
        tcol = _column(tb, f.text.path)
        if pa.types.is_string(tcol.type):
            tcol = pc.fill_null(tcol, "")
            cut = pc.binary_join_element_wise(pc.utf8_slice_codeunits(tcol, 0, TEXT_CHARS - 1), "…", "")
            tcol = pc.if_else(pc.greater(pc.utf8_length(tcol), TEXT_CHARS), cut, tcol)
            texts = np.asarray(tcol.to_numpy(zero_copy_only=False), dtype=object)
        else:
            texts = np.full(n, "", dtype=object)
    return ids, groups, texts
