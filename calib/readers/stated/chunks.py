"""Cutting the file into chunks and routing each line to pyarrow or to the per-line path."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from calib.readers.jsonl import BOM, R_TOO_LONG, too_long
from calib.readers.stated.slow import _Ctx, _Part, _Slow, _slow

if TYPE_CHECKING:  # pyarrow (and the columnar path) only for files big enough to need it
    import pyarrow as pa

#: Lines with more ``{`` + ``[`` than this go through the per-line path: pyarrow's
#: parser recurses without a limit (a line nested 30,000 deep crashes the process)
#: and Python's ``json`` stops near its recursion limit (~1,000), so only lines that
#: both surely read the same way are given to pyarrow.
MAX_OPENERS = 200
#: Bytes per chunk handed to pyarrow (one parse block each).
CHUNK_BYTES = 1 << 20
#: Failed pyarrow attempts per chunk before the rest of it is read line by line.
MAX_RETRIES = 16
#: Pieces of at most this many lines are read line by line rather than retried.
SLOW_BELOW = 4


def _chunk_is_clean(body: bytes, n: int) -> bool:
    """True when every line of ``body`` (``n`` lines, LF or CRLF ends, without the
    final newline) can go to pyarrow (the chunk-wide form of :func:`_classify`): each
    line is ``{...}``, all lines end alike (LF or CRLF), at most :data:`MAX_OPENERS`
    ``{`` + ``[`` beyond one a line, no ``Inf`` nor ``-NaN``, valid UTF-8.

    Done with numpy on the bytes, without the GIL, rather than ``bytes.count`` (1 ms
    per MB each, holding it). Every whole-chunk comparison writes into one scratch
    array: a fresh 1 MB temporary per comparison cost about 10 ms per chunk in page
    faults (a million rows: 0.43 s of the read on one thread, against 0.05 s when the
    same chunk was tested again and again); the line ends and the rare letters of
    ``Inf`` and ``-NaN`` are then checked at their positions only.
    """
    b = np.frombuffer(body, dtype=np.uint8)
    size = b.size
    if size < 2 or b[0] != 0x7B:  # "{"
        return False
    last = b[-2] if b[-1] == 0x0D else b[-1]
    if last != 0x7D:  # "}"
        return False
    eq = np.empty(size, dtype=bool)  # the scratch array of every comparison below

    def at(byte: int) -> np.ndarray:
        return np.flatnonzero(np.equal(b, byte, out=eq))

    if n > 1:
        nl = at(0x0A)  # "\n"
        if np.count_nonzero(b[nl[nl <= size - 2] + 1] == 0x7B) != n - 1:  # "\n{"
            return False
        if np.count_nonzero(b[nl[nl >= 1] - 1] == 0x7D) != n - 1:  # "}\n"
            crlf = nl[nl >= 2]  # "}\r\n"
            if size < 3 or np.count_nonzero((b[crlf - 1] == 0x0D) & (b[crlf - 2] == 0x7D)) != n - 1:
                return False
    # a byte absent from the chunk (memchr, 12 us a MB) needs no numpy pass (60 us)
    opens = np.count_nonzero(np.equal(b, 0x7B, out=eq))
    if b"[" in body:
        opens += np.count_nonzero(np.equal(b, 0x5B, out=eq))
    if opens - n > MAX_OPENERS - 1:
        return False
    if b"I" in body:
        i = at(0x49)  # "Inf"
        i = i[i <= size - 3]
        if np.any((b[i + 1] == 0x6E) & (b[i + 2] == 0x66)):
            return False
    if b"N" in body:
        j = at(0x4E)  # the first N of "-NaN"
        j = j[(j >= 1) & (j <= size - 3)]
        if np.any((b[j - 1] == 0x2D) & (b[j + 1] == 0x61) & (b[j + 2] == 0x4E)):
            return False
    if not body.isascii():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return False
    return True


def _line_index(body: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive, before the newline) of every line of ``body``."""
    b = np.frombuffer(body, dtype=np.uint8)
    nl = np.flatnonzero(b == 0x0A)
    starts = np.empty(nl.size + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = nl + 1
    ends = np.empty(nl.size + 1, dtype=np.int64)
    ends[:-1] = nl
    ends[-1] = b.size
    return starts, ends


def _byte_set(chars: bytes) -> np.ndarray:
    lut = np.zeros(256, dtype=bool)
    lut[np.frombuffer(chars, dtype=np.uint8)] = True
    return lut


#: First bytes of a JSON value that an arrow column of each type accepts (null: ``n``).
_FIRST_BYTES = {
    "double": _byte_set(b"-0123456789n"),
    "int64": _byte_set(b"-0123456789n"),
    "bool": _byte_set(b"tfn"),
    "string": _byte_set(b'"n'),
}


def _classify(body: bytes, starts: np.ndarray, ends: np.ndarray, ctx: _Ctx) -> np.ndarray:
    """Which lines can go to pyarrow: the per-line form of :func:`_chunk_is_clean`,
    vectorised, plus a look at the first byte of each used field's value so that lines
    whose value has another JSON type than the schema's (``"confidence": "high"``)
    go to the per-line path instead of making pyarrow fail. That look is only a
    routing guess: pyarrow still checks everything it is given."""
    b = np.frombuffer(body, dtype=np.uint8)
    size = b.size
    n = starts.size
    if size == 0:
        return np.zeros(n, dtype=bool)
    last = np.clip(ends - 1, 0, size - 1)
    cr = (ends > starts) & (b[last] == 0x0D)
    end2 = ends - cr
    ok = (end2 - starts >= 2) & (ends - starts <= ctx.options.max_line_chars)
    ok &= (b[np.clip(starts, 0, size - 1)] == 0x7B) & (b[np.clip(end2 - 1, 0, size - 1)] == 0x7D)
    pre = np.zeros(size + 1, dtype=np.int32)
    np.cumsum((b == 0x7B) | (b == 0x5B), out=pre[1:])
    ok &= pre[ends] - pre[starts] <= MAX_OPENERS

    def drop(positions: np.ndarray) -> None:
        if positions.size:
            ok[np.searchsorted(starts, positions, side="right") - 1] = False

    if size >= 3:
        drop(np.flatnonzero((b[:-2] == 0x49) & (b[1:-1] == 0x6E) & (b[2:] == 0x66)))  # Inf
    if size >= 4:
        drop(np.flatnonzero((b[:-3] == 0x2D) & (b[1:-2] == 0x4E) & (b[2:-1] == 0x61) & (b[3:] == 0x4E)))
    if not body.isascii():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            lines = np.unique(np.searchsorted(starts, np.flatnonzero(b >= 0x80), side="right") - 1)
            for i in lines:
                try:
                    body[starts[i]:ends[i]].decode("utf-8")
                except UnicodeDecodeError:
                    ok[i] = False
    schema = ctx.parse_options.explicit_schema if ctx.parse_options is not None else None
    for role, key in ctx.fields.used():
        if role not in ("confidence", "outcome", "pred", "gold"):
            continue  # ids and texts rarely change type; pyarrow's row hint handles those
        typ = _leaf_type(schema, key.path)
        allowed = _FIRST_BYTES.get(str(typ))
        if allowed is not None:
            drop(_deviant(b, json.dumps(key.path[-1], ensure_ascii=False).encode(), allowed))
    return ok


def _leaf_type(schema: pa.Schema | None, path: tuple[str, ...]) -> pa.DataType | None:
    if schema is None:
        return None
    t: Any = schema.field(path[0]).type
    for p in path[1:]:
        t = t.field(p).type
    return t


def _deviant(b: np.ndarray, pattern: bytes, allowed: np.ndarray) -> np.ndarray:
    """Positions of ``"key":`` in ``b`` whose value starts with a byte not in ``allowed``
    (a key followed by anything but ``:`` is text, not a key, and is skipped)."""
    size, k = b.size, len(pattern)
    if size <= k:
        return np.zeros(0, dtype=np.int64)
    cand = np.flatnonzero(b[: size - k] == pattern[1]) - 1
    cand = cand[cand >= 0]
    for i in (0, *range(2, k)):
        if not cand.size:
            return cand
        cand = cand[b[cand + i] == pattern[i]]

    def skip_space(q: np.ndarray) -> np.ndarray:
        for _ in range(4):  # more blanks than that: the line is only sent the slow way
            c = b[np.minimum(q, size - 1)]
            step = (q < size) & ((c == 0x20) | (c == 0x09) | (c == 0x0D))
            if not step.any():
                break
            q = q + step
        return q

    q = skip_space(cand + k)
    colon = (q < size) & (b[np.minimum(q, size - 1)] == 0x3A)
    cand, q = cand[colon], skip_space(q[colon] + 1)
    first = np.where(q < size, b[np.minimum(q, size - 1)], 0)
    return cand[~allowed[first]]


def _pieces(buf: bytes, numbers: np.ndarray, ctx: _Ctx, budget: list[int]) -> list[_Part]:
    """Read lines (all expected clean) with pyarrow; split around what it refuses."""
    from calib.readers.stated.columnar import _fast, _Redo
    n = len(numbers)
    if n == 0:
        return []
    if n <= SLOW_BELOW or budget[0] <= 0:
        return [_slow(_split(buf, n), numbers, ctx)]
    try:
        part, redo = _fast(buf, numbers, ctx)
    except _Redo as r:
        budget[0] -= 1
        starts, ends = _line_index(buf)

        def sub(i: int, j: int) -> list[_Part]:
            return _pieces(buf[starts[i]:ends[j - 1]] if j > i else b"", numbers[i:j], ctx, budget)

        if r.row is not None:
            h = r.row
            return sub(0, h) + [_slow([buf[starts[h]:ends[h]]], numbers[h:h + 1], ctx)] + sub(h + 1, n)
        return sub(0, n // 2) + sub(n // 2, n)
    if redo.size == 0:
        return [part]
    lines = _split(buf, n)
    return [part, _slow([lines[i] for i in redo], numbers[redo], ctx)]


def _split(buf: bytes, n: int) -> list[bytes]:
    return buf.split(b"\n")[:n]


def _chunk(data: bytes, span: tuple[int, int, int, int], ctx: _Ctx) -> list[_Part]:
    """Read the whole lines ``data[start:end]``: ``n`` lines, the first numbered ``first``.

    A clean chunk goes to pyarrow whole. Otherwise (or when pyarrow refuses it) each
    line is classified (:func:`_classify`); pyarrow reads the lines that pass, the
    per-line path the others.
    """
    from calib.readers.stated.columnar import _fast, _Redo
    start, end, first, n = span
    if n == 1 and end - start > ctx.options.max_line_chars:
        too_long = _too_long(data, start, end, first, ctx)
        if too_long is not None:
            return [too_long]
    body = data[start:end - 1] if data[end - 1:end] == b"\n" else data[start:end]
    numbers = np.arange(first, first + n, dtype=np.int64)
    if len(body) <= ctx.options.max_line_chars and _chunk_is_clean(body, n):
        try:
            part, redo = _fast(body, numbers, ctx)
        except _Redo:
            pass
        else:
            if redo.size == 0:
                return [part]
            lines = _split(body, n)
            return [part, _slow([lines[i] for i in redo], numbers[redo], ctx)]
    starts, ends = _line_index(body)
    ok = _classify(body, starts, ends, ctx)
    parts: list[_Part] = []
    if ok.all():
        parts += _pieces(body, numbers, ctx, [MAX_RETRIES])
    elif ok.any():
        # the bytes of the chosen lines, each with its newline, in one numpy selection
        keep = np.repeat(ok, ends - starts + 1)[: len(body)]
        good = np.frombuffer(body, dtype=np.uint8)[keep].tobytes().removesuffix(b"\n")
        parts += _pieces(good, numbers[ok], ctx, [MAX_RETRIES])
    rest = np.flatnonzero(~ok)
    if rest.size:
        parts.append(_slow([body[starts[i]:ends[i]] for i in rest], numbers[rest], ctx))
    return parts


def _too_long(data: bytes, start: int, end: int, no: int, ctx: _Ctx) -> _Part | None:
    """A chunk of one line over the limit, reported as :meth:`_Slow.line` would, without
    copying or scanning the line (a 200 MB line once cost 3 GB in numpy passes)."""
    e = end - (data[end - 1:end] == b"\n")
    e -= data[e - 1:e] == b"\r"
    s = start + 3 if data.startswith(BOM, start) else start
    limit = ctx.options.max_line_chars
    if e - s <= limit:
        return None
    slow = _Slow(ctx)
    slow.bad(no, None, R_TOO_LONG, too_long(e - s, limit),
             data[s:s + 400].decode("utf-8", "replace"))
    return slow.part()


def _chunks(data: bytes, size: int) -> list[tuple[int, int, int, int]]:
    """``(start, end, first_line, lines)`` of whole-line chunks of about ``size`` bytes."""
    out: list[tuple[int, int, int, int]] = []
    pos, line, total = 0, 1, len(data)
    b = np.frombuffer(data, dtype=np.uint8)
    scratch = np.empty(min(total, size + 1), dtype=bool)
    while pos < total:
        end = min(pos + size, total)
        if end < total:
            cut = data.rfind(b"\n", pos, end)
            if cut < 0:  # one line longer than the chunk: it gets a chunk of its own
                cut = data.find(b"\n", end)
                end = total if cut < 0 else cut + 1
            else:
                end = cut + 1
        # numpy into one scratch array: a quarter of bytes.count's time (no copy; a chunk
        # longer than ``size`` holds one long line, counted by bytes.count)
        k = (int(np.count_nonzero(np.equal(b[pos:end], 0x0A, out=scratch[:end - pos])))
             if end - pos <= scratch.size else data.count(b"\n", pos, end))
        n = k + (0 if data[end - 1:end] == b"\n" else 1)
        out.append((pos, end, line, n))
        line += n
        pos = end
    return out
