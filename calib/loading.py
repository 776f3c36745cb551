"""Loading: one entry point that recognises the format and calls its reader.

Readers live in :mod:`calib.readers` (one module per format). Each takes a
:class:`Source` and :class:`LoadOptions` and returns ``(Judgments, LoadReport)``;
this module turns that into a :class:`~calib.dataset.Dataset` with its count table.
"""

from __future__ import annotations

import io
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.scale import Scale
from calib.table import from_judgments, read_counts

#: Default cap on the decompressed size of a .gz input (a gzip bomb is refused).
MAX_DECOMPRESSED_BYTES = 2 * 1024**3
#: Default cap on the number of rows of one input.
MAX_ROWS = 20_000_000
#: Default cap on the length of one line (bytes: the JSONL readers measure the raw line).
MAX_LINE_CHARS = 1_000_000


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
    strict:
        Fail on the first bad line instead of reporting it and going on.
    normalisation:
        Option log-prob length normalisation: ``"none"``, ``"char"``, ``"byte"`` or
        ``"token"`` (lm-eval's ``acc_norm`` is ``"char"``).
    variant:
        For lm-eval samples: ``"acc"`` or ``"acc_norm"`` (sets normalisation).
    max_rows, max_line_chars, max_decompressed_bytes:
        Limits; inputs over them are refused with a clear message.
    """

    confidence_key: str | None = None
    outcome_key: str | None = None
    group_key: str | None = None
    id_key: str | None = None
    cluster_key: str | None = None
    rescale: Scale | None = None
    strict: bool = False
    normalisation: str = "none"
    variant: str = "acc"
    max_rows: int = MAX_ROWS
    max_line_chars: int = MAX_LINE_CHARS
    max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES
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


def gunzip_capped(data: bytes, name: str, limit: int) -> bytes:
    """Decompress gzip data, refusing output larger than ``limit`` bytes.

    ``limit`` is :attr:`LoadOptions.max_decompressed_bytes`: on the dashboard it comes
    from the environment variable ``CALIB_MAX_DECOMPRESSED_MB`` (read by
    :meth:`calib.limits.Limits.from_env` when the server starts, default 1024 MB);
    the command line and the Python API use :data:`MAX_DECOMPRESSED_BYTES` (2,048 MB)
    unless a caller passes its own :class:`LoadOptions`. The refusal names the file,
    the cap and both ways to raise it.
    """
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = io.BytesIO()
    chunk = data
    try:
        while chunk:
            out.write(d.decompress(chunk, max(1, limit + 1 - out.tell())))
            if out.tell() > limit:
                raise CalibError(
                    f"{name}: decompresses to more than {limit:,} bytes ({_megabytes(limit)} MB); refused, "
                    "since a .gz that inflates past this cap may be a gzip bomb. If the file is genuine, "
                    "raise the cap: on the dashboard with the environment variable CALIB_MAX_DECOMPRESSED_MB "
                    "(in MB; restart the server after setting it), in Python with "
                    "LoadOptions(max_decompressed_bytes=...); or decompress the file and load it uncompressed."
                )
            chunk = d.unconsumed_tail
            if d.eof and d.unused_data:  # concatenated gzip members
                rest = d.unused_data
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                chunk = rest
    except zlib.error as exc:
        raise CalibError(f"{name}: not a valid gzip file ({exc})") from None
    if not d.eof:
        raise CalibError(f"{name}: the gzip stream is truncated")
    return out.getvalue()


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
    first = _first_object(head)
    if first is None:
        if head[:1] == b"[":
            return "lmeval" if b"filtered_resps" in head else "counts"
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
            obj = json.loads(raw)
        except ValueError:
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
        data = gunzip_capped(data, name, options.max_decompressed_bytes)
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
        table = read_counts(src.name, scale=options.rescale, data=src.data)
        report = LoadReport(
            source=src.name, format="counts", lines_read=table.cells, kept=table.cells,
            fields={"value": "value", "n": "n", "correct": "correct"},
            scale=table.scale.to_dict(),
            notes=(f"count table: {table.total:,} judgments in {table.cells:,} cells",),
        )
        return Dataset(ds_name, table, report, None)
    rows, report = _reader(kind)(src, options)
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
