"""JSON from untrusted inputs: the limits checked before parsing, the line rules, field access.

- Parsing: :func:`json_loads` (no crash on deep nesting, huge integers or lone
  surrogates) and the costs refused before anything is parsed (:func:`check_json_size`
  for one document, :func:`check_lines_cost` for a file read line by line; both from
  :func:`parse_cost` or a per-line estimate, against :class:`~calib.readers.base.LoadOptions`).
- Lines: :class:`JsonLines` yields ``(line number, object)`` and reports every line that
  is too long, not UTF-8, not JSON or not an object.
- Fields and values: :func:`get_path` / :func:`get_or` / :func:`is_missing` (dotted
  paths), :func:`first_key`, :func:`as_number`, :func:`short_text`; a named cluster
  field (:func:`cluster_key`, :func:`cluster_label`), read in the reader's one pass.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from calib.errors import CalibError
from calib.loadreport import LineIssue
from calib.readers.base import IssueCollector, LoadOptions, Source, megabytes

#: Longest per-row text kept for the review queue.
TEXT_CHARS = 200
#: The UTF-8 byte-order mark, accepted at the start of a file (and, by the stated reader, of a line).
BOM = b"\xef\xbb\xbf"
# the reasons of a bad line, the same in every line reader
R_TOO_LONG = "line too long"
R_UTF8 = "not UTF-8"
R_JSON = "invalid JSON"
R_TRUNCATED = "truncated line"
R_NOT_OBJECT = "not a JSON object"


# ------------------------------------------------------------------ parsing, untrusted
class JsonLimitError(ValueError):
    """A JSON text that is valid but refused: nested too deeply, or too costly to parse.

    A :class:`ValueError`, so a reader's handler of unreadable JSON also sees it; its
    message says which limit and why."""


#: What :func:`json_loads` says of a text nested deeper than Python's recursion limit.
TOO_DEEP = "nested too deeply to read (more than about 1,000 levels of [ and {)"


def big_int(digits: str) -> int | float:
    limit = sys.get_int_max_str_digits()
    return int(digits) if limit == 0 or len(digits.lstrip("-")) <= limit else float(digits)


def json_loads(text: str | bytes) -> Any:
    """``json.loads`` for untrusted text.

    An integer literal over Python's int-string digit limit (4,300 digits; JSON has
    none) is read as a float (``inf``) rather than refusing the whole text; nesting
    deeper than the recursion limit raises :class:`JsonLimitError` (:data:`TOO_DEEP`)
    instead of :class:`RecursionError`. The C parser gives up at that depth after
    touching at most that many characters, so the check costs nothing up front.
    """
    try:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:  # the int-string digit limit (json raises it as ValueError)
            obj = json.loads(text, parse_int=big_int)
    except RecursionError:
        raise JsonLimitError(TOO_DEEP) from None
    return no_lone_surrogates(obj) if may_hold_surrogates(text) else obj


def may_hold_surrogates(text: str | bytes) -> bool:
    """Could parsing ``text`` give a string with a lone surrogate? Only a ``\\uD8xx``-
    ``\\uDFxx`` escape can write one (UTF-8 cannot), so two C-speed searches decide."""
    if isinstance(text, str):
        return "\\ud" in text or "\\uD" in text
    return b"\\ud" in text or b"\\uD" in text


def no_lone_surrogates(obj: Any) -> Any:
    """``obj`` (parsed JSON) with each lone surrogate in a string or key written as its
    escape (``"\\ud800"``, six characters, as in the file).

    JSON allows ``"\\ud800"``; Python reads it as a string that no UTF-8 output (a
    terminal, a CSV, Streamlit's messages to the browser) can encode, so it would crash
    every place the text is shown. Surrogate pairs (an emoji escaped) are whole
    characters already and stay as they are. Iterative: the depth is whatever parsed."""

    def fix(v: Any) -> Any:
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return v.encode("utf-8", "backslashreplace").decode("utf-8")
        return v

    root = [obj]
    stack: list[list[Any] | dict[Any, Any]] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, list | dict):
                    stack.append(v)
                else:
                    node[i] = fix(v)
        else:
            for k in list(node):
                v = node[k]
                if isinstance(v, list | dict):
                    stack.append(v)
                else:
                    node[k] = fix(v)
                if fix(k) is not k:
                    node[fix(k)] = node.pop(k)
    return root[0]


def parse_cost(text: str | bytes) -> int:
    """An upper estimate of the memory ``json.loads(text)`` takes, in bytes.

    Twice the text (strings and numbers become objects about as large), plus 96 bytes
    per ``[`` or ``{`` (an empty list or dict with its garbage-collector header and a
    pointer to it) and 48 per ``,`` or ``:`` (a pointer, a small object or a dict slot).
    Brackets inside strings are counted too, so text-heavy documents are overestimated
    by a constant factor, never underestimated. Measured with ``tracemalloc``: ``[[],
    [],...]`` takes 23 times its text (estimate 50), ``[{},...]`` 25 (50),
    ``[{"a":[]},...]`` 29 (34), ``[0,0,...]`` 5 (26). Four C-speed passes over the text.
    """
    if isinstance(text, str):
        opens = text.count("[") + text.count("{")
        seps = text.count(",") + text.count(":")
    else:
        opens = text.count(b"[") + text.count(b"{")
        seps = text.count(b",") + text.count(b":")
    return 2 * len(text) + 96 * opens + 48 * seps


def check_json_size(text: str | bytes, what: str, options: LoadOptions, *, whole_file: bool = False) -> None:
    """Refuse a JSON document over :attr:`LoadOptions.max_json_bytes` or whose
    :func:`parse_cost` is over :attr:`LoadOptions.max_parse_bytes`, before parsing it
    (:class:`JsonLimitError` naming ``what``, the size and the cap). ``whole_file``: a
    whole input, already under the decompression cap; only its parse cost is checked."""
    if not whole_file and len(text) > options.max_json_bytes:
        raise JsonLimitError(
            f"{what} is {megabytes(len(text))} MB of JSON, over the {megabytes(options.max_json_bytes)} MB "
            "that one JSON document may hold (LoadOptions.max_json_bytes; on the dashboard CALIB_MAX_JSON_MB)"
        )
    cost = parse_cost(text)
    if cost > options.max_parse_bytes:
        raise JsonLimitError(
            f"{what} would take about {megabytes(cost)} MB of memory to parse ({megabytes(len(text))} MB "
            f"of JSON, mostly brackets and separators), over the {megabytes(options.max_parse_bytes)} MB "
            "allowed (LoadOptions.max_parse_bytes; on the dashboard CALIB_MAX_PARSE_MB)"
        )


#: Memory a line-by-line JSON reader keeps per line, bytes (see :func:`check_lines_cost`).
ROW_BYTES = 800


def check_lines_cost(data: bytes, name: str, options: LoadOptions, *, row_bytes: int = ROW_BYTES,
                     text_factor: float = 1.0) -> None:
    """Refuse, before the first line is parsed, an input whose line-by-line reading would
    take more than :attr:`LoadOptions.max_parse_bytes` (the line readers' twin of
    :func:`check_json_size`): the reader keeps about ``row_bytes`` per line (Python
    objects: measured 740 bytes for an option log-prob row) plus ``text_factor`` times
    the text (the lines themselves, and what is kept of them). A small ``.gz`` of
    millions of short lines is the case this guards."""
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    cost = lines * row_bytes + int(text_factor * len(data))
    if cost > options.max_parse_bytes:
        raise CalibError(
            f"{name}: {lines:,} lines ({len(data) / 2**20:,.0f} MB) would take about "
            f"{cost / 2**20:,.0f} MB of memory to read line by line, over the "
            f"{options.max_parse_bytes / 2**20:,.0f} MB allowed; refused (raise CALIB_MAX_PARSE_MB "
            "if this file is genuine)"
        )


# ------------------------------------------------------------------ a JSON array of records
_BLANKS = re.compile(r"[ \t\n\r]*")
#: Copies of its text that reading a JSON array record by record holds at its peak.
ARRAY_COPIES = 4


def array_as_lines(source: Source, options: LoadOptions) -> Source | None:
    """A JSON array of records (``json.dump(list_of_dicts)``) as JSON Lines: record N on
    line N, so that every line reader applies its per-line rules (duplicate keys, NaN,
    a bad record reported and the others kept) and its limits (line length, rows, parse
    cost) to each record; the faces then say "record N" (:func:`records_named`).

    Each record's text is cut from the file as written (found with
    :meth:`json.JSONDecoder.raw_decode`, one record parsed at a time; numbers are not
    converted), its line breaks (whitespace between tokens: JSON strings hold none) made
    spaces. ``None`` when ``source`` is not one JSON array (not UTF-8, the first record
    unreadable, or more text after the closing ``]``): it is then read line by line as
    before. A record that cannot be parsed ends the array: the rest of the text becomes
    one last record, reported as bad. The conversion holds the text about four times
    (bytes, text, records, lines): over :attr:`LoadOptions.max_parse_bytes` it is refused
    before it starts."""
    data = source.data.removeprefix(BOM)
    start = len(data) - len(data.lstrip(b" \t\r\n"))
    if data[start:start + 1] != b"[":
        return None
    if ARRAY_COPIES * len(data) > options.max_parse_bytes:
        raise CalibError(
            f"{source.name}: a JSON array of {megabytes(len(data))} MB would take about "
            f"{megabytes(ARRAY_COPIES * len(data))} MB to read record by record, over the "
            f"{megabytes(options.max_parse_bytes)} MB allowed (CALIB_MAX_PARSE_MB); write it as JSON Lines "
            "(one record per line), which is read without that cost"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder(parse_int=lambda _: 0, parse_float=lambda _: 0.0, parse_constant=lambda _: 0.0)
    records: list[str] = []
    pos = _BLANKS.match(text, start + 1).end()  # type: ignore[union-attr]
    closed = text.startswith("]", pos)
    if closed:
        pos += 1
    while not closed:
        try:
            end = decoder.raw_decode(text, pos)[1]
        except (ValueError, RecursionError):
            if not records:
                return None
            records.append(text[pos:])
            break
        records.append(text[pos:end])
        pos = _BLANKS.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos = _BLANKS.match(text, pos + 1).end()  # type: ignore[union-attr]
        elif text.startswith("]", pos):
            pos, closed = pos + 1, True
        else:
            records.append(text[pos:])
            break
    if closed and text[pos:].strip(" \t\r\n"):
        return None  # more after the array: JSON Lines whose first line is an array
    del text  # the records are copies: one copy of the text less at the peak
    body = "".join(r.replace("\r", " ").replace("\n", " ") + "\n" for r in records)
    count = len(records)
    del records
    note = (f"{source.name}: a JSON array of {count:,} record(s), not JSON Lines: each record read "
            "as one line would be (record N in the messages is the N-th element of the array)")
    return Source(source.name, body.encode("utf-8"), (*source.notes, note))


def records_named(issues: tuple[LineIssue, ...]) -> tuple[LineIssue, ...]:
    """The issues of an input read by :func:`array_as_lines`, named by record."""
    return tuple(dataclasses.replace(i, unit="record") for i in issues)


# ------------------------------------------------------------------ lines and fields
class JsonLines:
    """Iterate ``(line_number, object)`` over a JSONL source.

    Counts every line (:attr:`lines_read`, :attr:`blank`) and reports lines that are
    too long, not UTF-8, not JSON (a last line cut off without its newline is
    reported as truncated) or not a JSON object.
    """

    def __init__(self, source: Source, options: LoadOptions, issues: IssueCollector, *,
                 row_bytes: int = ROW_BYTES, text_factor: float = 1.0) -> None:
        self.source = source
        self.options = options
        self.issues = issues
        self.lines_read = 0
        self.blank = 0
        self.row_bytes = row_bytes
        self.text_factor = text_factor

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        data = self.source.data
        check_lines_cost(data, self.source.name, self.options, row_bytes=self.row_bytes,
                         text_factor=self.text_factor)
        data = data.removeprefix(BOM)
        parts = data.split(b"\n")
        ends_with_newline = data.endswith(b"\n")
        if ends_with_newline:
            parts.pop()
        last = len(parts)
        for no, raw in enumerate(parts, start=1):
            self.lines_read += 1
            if self.lines_read > self.options.max_rows:
                raise CalibError(
                    f"{self.source.name}: more than {self.options.max_rows:,} lines; refused "
                    "(raise CALIB_MAX_ROWS if this file is genuine)"
                )
            raw = raw.rstrip(b"\r")
            if not raw.strip():
                self.blank += 1
                continue
            if len(raw) > self.options.max_line_chars:
                self.issues.bad(no, None, R_TOO_LONG, too_long(len(raw), self.options.max_line_chars),
                                preview=raw[:200].decode("utf-8", "replace"))
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.issues.bad(no, None, R_UTF8, not_utf8(exc), preview=raw.decode("utf-8", "replace"))
                continue
            try:
                obj = json_loads(text)
            except JsonLimitError as exc:  # valid JSON nested deeper than Python reads
                self.issues.bad(no, None, R_JSON, f"cannot be read: {exc}", preview=text)
                continue
            except ValueError as exc:
                if no == last and not ends_with_newline:
                    self.issues.bad(no, None, R_TRUNCATED, cut_off(exc), preview=text)
                else:
                    self.issues.bad(no, None, R_JSON, not_json(exc), preview=text)
                continue
            if not isinstance(obj, dict):
                self.issues.bad(no, None, R_NOT_OBJECT,
                                f"expected a JSON object {{...}}, got {type(obj).__name__}", preview=text)
                continue
            yield no, obj


def json_objects(data: bytes, max_line_chars: int, bad: Callable[[int, str], None], *,
                 line_bom: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, object)`` per JSON-object line of ``data`` (its limits already
    checked: :func:`check_lines_cost`), blank lines skipped; ``bad(line, why)`` for a line
    over ``max_line_chars`` bytes, not UTF-8, not JSON or not an object. ``line_bom``: a
    BOM opening a line is dropped (else that line is not JSON). The plain twin of
    :class:`JsonLines`, for readers that keep only a message per bad line."""
    for no, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        if line_bom:
            raw = raw.removeprefix(BOM)
        if not raw.strip():
            continue
        if len(raw) > max_line_chars:
            bad(no, too_long(len(raw), max_line_chars))
            continue
        try:
            obj = json_loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            bad(no, not_utf8(exc))
            continue
        except JsonLimitError as exc:
            bad(no, f"cannot be read: {exc}")
            continue
        except ValueError as exc:
            bad(no, not_json(exc))
            continue
        if not isinstance(obj, dict):
            bad(no, f"expected a JSON object {{...}}, got {type(obj).__name__}")
            continue
        yield no, obj


def too_long(n: int, limit: int) -> str:
    """The detail of a line of ``n`` bytes over the ``limit``."""
    return f"line is {n:,} bytes, over the {limit:,} limit"


def not_utf8(exc: UnicodeDecodeError) -> str:
    """The detail of a line that is not UTF-8."""
    return f"bytes that are not UTF-8 at column {exc.start + 1}"


def not_json(exc: ValueError) -> str:
    """The detail of a line that is not valid JSON."""
    return f"not valid JSON: {_json_msg(exc)}"


def cut_off(exc: ValueError) -> str:
    """The detail of a last line cut off inside its JSON (no final newline)."""
    return f"the last line is cut off (file truncated?): {_json_msg(exc)}"


def _json_msg(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    return str(exc)


_MISSING = object()


def get_or(obj: Any, path: str | tuple[str, ...], default: Any = None) -> Any:
    """The value at a dotted field path: ``obj["a"]["b"]`` for ``path="a.b"`` (a key
    containing the dot wins) or for the steps ``("a", "b")``; a step that is a number
    indexes a list (``"choices.0"``); ``default`` when absent (a null is ``None``).

    The one resolver of a field path: every reader, the covariate and the review card
    read a named field through it or :func:`get_path`. One function, no inner call: the
    stated reader's per-line path calls it several times a line."""
    if isinstance(path, tuple):
        parts: tuple[str, ...] | list[str] = path
    elif isinstance(obj, dict) and path in obj:
        return obj[path]
    else:
        parts = path.split(".")
    cur = obj
    for part in parts:
        if type(cur) is dict or isinstance(cur, dict):
            cur = cur.get(part, _MISSING)
            if cur is _MISSING:
                return default
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return default
    return cur


def get_path(obj: Any, path: str | tuple[str, ...]) -> Any:
    """:func:`get_or` with a sentinel (:func:`is_missing`) for an absent path."""
    return get_or(obj, path, _MISSING)


def cluster_label(value: Any) -> str | None:
    """A cluster field's value as text (Python's ``str``: ``1``, ``True``, ``q7``); ``None``
    when absent, null, an object or a list (the row is then its own cluster,
    :func:`calib.clusters.labels`). Every reader that reads ``--cluster-key`` uses it."""
    if value is None or is_missing(value) or isinstance(value, dict | list):
        return None
    return str(value)


def cluster_how(key: str) -> str:
    """How clusters read from the field ``key`` were found, in words (``Judgments.cluster_how``)."""
    return f"field {key!r}"


def cluster_key(options: LoadOptions, id_key: str | None = None) -> str | None:
    """The field a reader reads each row's cluster from in its own pass: ``--cluster-key``
    unless it is absent, ``none`` (rows independent) or the reader's id field ``id_key``
    (then :func:`calib.clusters.infer` clusters by the item ids the reader read)."""
    key = options.cluster_key
    if key is None or key.strip().lower() == "none" or key == id_key:
        return None
    return key


def is_missing(value: Any) -> bool:
    return value is _MISSING


def first_key(obj: dict[str, Any], override: str | None, candidates: tuple[str, ...]) -> str | None:
    """The override when given, else the first candidate present in ``obj``."""
    if override:
        return override
    for k in candidates:
        if k in obj:
            return k
    return None


def short_text(value: Any) -> str:
    """A one-line, length-capped text for the review queue (never HTML)."""
    if value is None or is_missing(value):
        return ""
    t = " ".join(str(value).split())
    return t if len(t) <= TEXT_CHARS else t[: TEXT_CHARS - 1] + "…"


def as_number(value: Any) -> float | None:
    """A finite-or-infinite float from a JSON number or numeric string; ``None`` if not."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer beyond the float range (1e400 written out)
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None
