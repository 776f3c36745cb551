"""Loading: one entry point that recognises the format and calls its reader.

Readers live in :mod:`calib.readers` (one module per format). Each takes a
:class:`Source` and :class:`LoadOptions` and returns ``(Judgments, LoadReport)``;
this module turns that into a :class:`~calib.dataset.Dataset` with its count table.
"""

from __future__ import annotations

import json
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calib import clusters
from calib.dataset import Dataset
from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.scale import Scale, rescale_warnings
from calib.table import from_judgments, read_counts

#: Default cap on the decompressed size of a .gz input (a gzip bomb is refused): the
#: dashboard's and the command line's (``CALIB_MAX_DECOMPRESSED_MB``). The inflated text is
#: held while it is parsed, at up to four times its size: 200 MB of text keeps one input
#: under 1 GB (``bench/bench_hostile_memory.py``); a 1M-row judgments file is 60-100 MB.
MAX_DECOMPRESSED_BYTES = 200 * 2**20
#: Default cap on the number of rows of one input (``CALIB_MAX_ROWS``). A row costs about
#: 130 bytes while it is read and reduced (``bench/bench_hostile_memory.py --extra``), so
#: 5 million rows stay under 1 GB even when a small ``.gz`` holds them; larger inputs raise
#: the variable, or reduce to a count table in the warehouse (see the README).
MAX_ROWS = 5_000_000
#: Default cap on the length of one line (bytes: the JSONL readers measure the raw line).
MAX_LINE_CHARS = 1_000_000
#: Default cap on the rows of a count table (one per group and stated value; a million
#: cells hold every distinct softmax probability of a million items).
MAX_CELLS = 1_000_000
#: Default cap on one JSON document parsed whole: an Inspect ``.eval`` member, one
#: sample of a ``.json`` log, a JSON count table (Inspect samples are 10-100 kB; one
#: holding images as base64 a few MB).
MAX_JSON_BYTES = 64 * 2**20
#: Default cap on the memory :func:`parse_cost` estimates parsing one JSON document takes.
MAX_PARSE_BYTES = 512 * 2**20


@dataclass(frozen=True)
class LoadOptions:
    """Options every reader understands (each ignores what does not apply to it).

    Attributes
    ----------
    confidence_key, outcome_key, group_key, id_key:
        Field names overriding auto-detection (dotted paths allowed: ``"meta.conf"``).
    cluster_key:
        Field whose value groups dependent rows (the same item judged several times);
        ``None``: inferred (Inspect epochs, repeated item ids) where the reader can.
    rescale:
        Stated scale overriding detection (``--rescale LO,HI``).
    mixed_scales:
        Read bare numbers in two ranges (0.85 next to 85) each by its range: up to 1 a
        probability, above 1 on the detected scale (``--mixed-scales``); without it such
        a file is refused with both counts (:func:`calib.scale.read_scale`).
    strict:
        Fail on the first bad line instead of reporting it and going on.
    normalisation:
        Option log-prob length normalisation: ``"none"``, ``"char"``, ``"byte"`` or
        ``"token"`` (lm-eval's ``acc_norm`` is ``"char"``).
    variant:
        For lm-eval samples: ``"acc"`` or ``"acc_norm"`` (sets normalisation).
    max_rows, max_line_chars, max_decompressed_bytes, max_cells, max_json_bytes, max_parse_bytes:
        Limits; inputs over them are refused with a clear message, before the cost they
        guard (see :mod:`calib.limits`).
    """

    confidence_key: str | None = None
    outcome_key: str | None = None
    group_key: str | None = None
    id_key: str | None = None
    cluster_key: str | None = None
    rescale: Scale | None = None
    mixed_scales: bool = False
    strict: bool = False
    normalisation: str = "none"
    variant: str = "acc"
    max_rows: int = MAX_ROWS
    max_line_chars: int = MAX_LINE_CHARS
    max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES
    max_cells: int = MAX_CELLS
    max_json_bytes: int = MAX_JSON_BYTES
    max_parse_bytes: int = MAX_PARSE_BYTES
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    """One input's name and bytes (already decompressed when it was ``.gz``)."""

    name: str
    data: bytes


FORMATS = ("stated", "logprobs", "lmeval", "inspect", "counts")


def _megabytes(nbytes: int) -> str:
    """``nbytes`` in MB (2**20 bytes) for a message: ``"8"``, ``"1.5"``, ``"0.00095"``."""
    mb = nbytes / 2**20
    if mb == round(mb):
        return f"{round(mb):,}"
    return f"{mb:,.1f}" if mb >= 10 else f"{mb:.2g}"


def gunzip_capped(data: bytes, name: str, limit: int, *, max_lines: int | None = None) -> bytes:
    """Decompress gzip data, refusing output larger than ``limit`` bytes.

    ``limit`` is :attr:`LoadOptions.max_decompressed_bytes`: on the dashboard it comes
    from the environment variable ``CALIB_MAX_DECOMPRESSED_MB`` (read by
    :meth:`calib.limits.Limits.from_env`, default :data:`MAX_DECOMPRESSED_BYTES`, 200 MB),
    for the command line too; the Python API uses :data:`MAX_DECOMPRESSED_BYTES` unless a
    caller passes its own :class:`LoadOptions`. The refusal names the file,
    the cap and both ways to raise it. ``max_lines``: also refuse more newlines than
    this (a line-per-row input over the row cap), before anything is held.

    Two passes, so that neither a refusal nor an accepted file costs twice its size:
    the first inflates in 1 MB pieces, keeping nothing but the size of each gzip
    member (and the newline count), and refuses as soon as the cap is passed; the
    second inflates each member straight into a buffer of its known size. A file of
    several concatenated members briefly holds its output twice (they are joined).
    """
    sizes: list[tuple[int, int, int]] = []  # (start, end, inflated size) of each member
    view = memoryview(data)
    total = lines = start = 0
    try:
        while True:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk: bytes | memoryview = view[start:]
            size = 0
            while chunk and not d.eof:
                piece = d.decompress(chunk, _PIECE)
                size += len(piece)
                if total + size > limit:
                    raise CalibError(_bomb_message(name, limit))
                if max_lines is not None:
                    lines += piece.count(b"\n")
                    if lines > max_lines:
                        raise CalibError(
                            f"{name}: more than {max_lines:,} lines once decompressed; refused before "
                            "decompressing it all (raise CALIB_MAX_ROWS if this file is genuine, or aggregate it "
                            "to a count table value,n,correct)"
                        )
                chunk = d.unconsumed_tail
            if not d.eof:
                raise CalibError(f"{name}: the gzip stream is truncated")
            end = len(data) - len(d.unused_data)
            sizes.append((start, end, size))
            total += size
            if not d.unused_data:  # else: concatenated gzip members
                break
            start = end
    except zlib.error as exc:
        raise CalibError(f"{name}: not a valid gzip file ({exc})") from None
    # one allocation of exactly the final size per member: zlib then neither grows nor
    # shrinks (a shrink copies the whole buffer)
    parts = [zlib.decompress(view[a:b], 16 + zlib.MAX_WBITS, max(n, 1)) for a, b, n in sizes]
    out = parts[0] if len(parts) == 1 else b"".join(parts)
    if out[:2] == b"\x1f\x8b":
        raise CalibError(f"{name}: decompresses to another gzip stream (compressed twice?); "
                         "decompress it once more and load the result")
    return out


#: Piece size of the counting pass of :func:`gunzip_capped`.
_PIECE = 1 << 20


def _bomb_message(name: str, limit: int) -> str:
    return (
        f"{name}: decompresses to more than {limit:,} bytes ({_megabytes(limit)} MB); refused, "
        "since a .gz that inflates past this cap may be a gzip bomb. If the file is genuine, "
        "raise the cap: on the dashboard with the environment variable CALIB_MAX_DECOMPRESSED_MB "
        "(in MB; restart the server after setting it), in Python with "
        "LoadOptions(max_decompressed_bytes=...); or decompress the file and load it uncompressed."
    )


# ------------------------------------------------------------------ JSON, untrusted
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
            f"{what} is {_megabytes(len(text))} MB of JSON, over the {_megabytes(options.max_json_bytes)} MB "
            "that one JSON document may hold (LoadOptions.max_json_bytes; on the dashboard CALIB_MAX_JSON_MB)"
        )
    cost = parse_cost(text)
    if cost > options.max_parse_bytes:
        raise JsonLimitError(
            f"{what} would take about {_megabytes(cost)} MB of memory to parse ({_megabytes(len(text))} MB "
            f"of JSON, mostly brackets and separators), over the {_megabytes(options.max_parse_bytes)} MB "
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


def _strip_gz(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") else name


def sniff_format(name: str, data: bytes) -> str:
    """Recognise the format of one input from its name and first bytes."""
    low = _strip_gz(name).lower()
    if low.endswith(".eval") or data[:4] == b"PK\x03\x04":
        return "inspect"
    if low.endswith(".csv") or low.endswith(".parquet"):
        return "counts"
    head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    base = low.replace("\\", "/").rsplit("/", 1)[-1]
    # lm-eval: samples_<task>_<date>.jsonl (a first line can outgrow the sniffed head with
    # few-shot prompts) and results_<date>.json (read only to say it has no samples)
    if base.startswith("samples_") and base.endswith((".jsonl", ".json")) and head[:1] in (b"{", b"["):
        return "lmeval"
    if head[:1] == b"{" and (head.startswith(b'{"doc_id"') or (
            base.startswith("results_") and base.endswith(".json") and b'"lm_eval_version"' in data)):
        return "lmeval"
    # a whole-file JSON object: Inspect's .json log
    if head[:1] == b"{" and low.endswith(".json") and (b'"eval"' in data[:4096] or b'"samples"' in data):
        return "inspect"
    if data[:4] == b"PAR1":  # Parquet under another name
        return "counts"
    first = _first_object(head)
    if first is None:
        if head[:1] == b"[":
            if b"filtered_resps" in head:
                return "lmeval"
            # a JSON array: a count table when its rows have the count columns; else the
            # stated reader says that one object per line was expected
            return "counts" if all(k in head.lower() for k in (b'"value"', b'"n"', b'"correct"')) else "stated"
        return "stated"
    keys = set(first)
    if {"filtered_resps", "doc"} <= keys or "resps" in keys and "doc" in keys:
        return "lmeval"
    if keys & {"logprobs", "choice_logprobs", "option_logprobs", "logits", "option_probs", "choice_probs", "probs"}:
        return "logprobs"
    if {"value", "n", "correct"} <= {k.lower() for k in keys}:
        return "counts"
    return "stated"


def _first_object(head: bytes, limit: int = 50) -> dict | None:
    """The first JSON object among the first ``limit`` lines of ``head``."""
    for raw in head.split(b"\n")[:limit]:
        raw = raw.strip().lstrip(b"\xef\xbb\xbf")
        if not raw:
            continue
        try:
            obj = json_loads(raw)
        except ValueError:  # also nested too deeply (JsonLimitError)
            continue
        if isinstance(obj, dict):
            return obj
    return None


def field_names(data: bytes, limit: int = 50) -> list[str]:
    """Keys of the first JSON object in a JSONL input (one level of nesting as ``a.b``),
    for choosing a field by hand. Empty when the input is not JSONL."""
    obj = _first_object(data[:262144], limit)
    if obj is None:
        return []
    out: list[str] = []
    for k, val in obj.items():
        out.append(str(k))
        if isinstance(val, dict):
            out.extend(f"{k}.{k2}" for k2 in val if not isinstance(val[k2], dict | list))
    return out


def read_source(path: str | Path, data: bytes | None = None, options: LoadOptions | None = None) -> Source:
    """Read one file (or given bytes), decompressing ``.gz`` under the cap."""
    options = options or LoadOptions()
    name = str(path)
    if data is None:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise CalibError(f"{name}: no such file") from None
        except IsADirectoryError:
            raise CalibError(f"{name}: is a folder; pass the folder to load_many") from None
        except OSError as exc:
            raise CalibError(f"{name}: cannot read ({exc.strerror})") from None
    if name.lower().endswith(".gz") or data[:2] == b"\x1f\x8b":
        # one row per line: the row cap applies while inflating, before the bytes are held
        lined = _strip_gz(name).lower().endswith((".jsonl", ".ndjson", ".csv"))
        data = gunzip_capped(data, name, options.max_decompressed_bytes,
                             max_lines=options.max_rows + 1 if lined else None)
    return Source(_strip_gz(Path(name).name) if "/" in name else _strip_gz(name), data)


def load(
    path: str | Path,
    data: bytes | None = None,
    *,
    name: str | None = None,
    options: LoadOptions | None = None,
    fmt: str = "auto",
) -> Dataset:
    """Load one input file (or uploaded bytes) into a :class:`Dataset`.

    Parameters
    ----------
    path:
        File path, or the uploaded file's name when ``data`` is given. A folder
        (an lm-eval output folder) is read with :func:`load_many`.
    data:
        The file's bytes, when they come from an upload.
    name:
        Dataset name (model/judge); defaults to the file name without extensions.
    fmt:
        One of :data:`FORMATS` or ``"auto"`` (sniffed from name and content).
    """
    options = options or LoadOptions()
    if data is None and Path(path).is_dir():
        files = sorted(p for p in Path(path).iterdir() if p.is_file())
        return load_many([(str(p), p.read_bytes()) for p in files], name=name or Path(path).name, options=options)
    src = read_source(path, data, options)
    ds_name = name or _default_name(src.name)
    kind = sniff_format(src.name, src.data) if fmt == "auto" else fmt
    if kind not in FORMATS:
        raise CalibError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if kind == "counts":
        table = read_counts(src.name, scale=options.rescale, data=src.data, max_rows=options.max_cells,
                            max_line=options.max_line_chars, max_parse=options.max_parse_bytes)
        # --rescale 0,100 on a table of values 1 to 9: said, not applied silently
        warnings = tuple(rescale_warnings(table.value[table.n > 0], options.rescale)) if options.rescale else ()
        report = LoadReport(
            source=src.name, format="counts", lines_read=table.cells, kept=table.cells,
            fields={"value": "value", "n": "n", "correct": "correct"},
            scale=table.scale.to_dict(),
            notes=(f"count table: {table.total:,} judgments in {table.cells:,} cells",)
            + tuple(f"warning: {w}" for w in warnings),
            warnings=warnings,
        )
        return Dataset(ds_name, table, report, None)
    rows, report = _reader(kind)(src, options)
    # dependent rows (Inspect epochs, repeated ids, --cluster-key): intervals resample clusters
    rows, report = clusters.infer(rows, report, options, src)
    return Dataset(ds_name, from_judgments(rows), report, rows)


def load_many(
    files: list[tuple[str, bytes]], *, name: str, options: LoadOptions | None = None
) -> Dataset:
    """Load several files as one dataset (an lm-eval output folder: one file per task,
    the task as the group). Files that are not samples (``results_*.json``) are skipped
    and named in the report's notes."""
    from calib.readers import lmeval

    options = options or LoadOptions()
    return lmeval.read_folder(files, name=name, options=options)


def _reader(kind: str):  # type: ignore[no-untyped-def]
    if kind == "stated":
        from calib.readers.stated import read
    elif kind == "logprobs":
        from calib.readers.logprobs import read
    elif kind == "lmeval":
        from calib.readers.lmeval import read
    elif kind == "inspect":
        from calib.readers.inspect import read
    else:  # pragma: no cover - guarded by FORMATS
        raise CalibError(f"no reader for {kind}")
    return read


def _default_name(filename: str) -> str:
    base = Path(filename).name
    for ext in (".jsonl", ".json", ".eval", ".csv", ".parquet", ".ndjson"):
        if base.lower().endswith(ext):
            return base[: -len(ext)]
    return base
