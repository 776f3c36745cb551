"""Opening an Inspect log: the ``.eval`` zip (deflate or zstd members, under the caps) or the
``.json`` log, as a header and an iterator of ``(member, sample)``."""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import zstandard

from calib.errors import CalibError
from calib.readers.base import LoadOptions, Source
from calib.readers.jsonl import (
    TOO_DEEP,
    JsonLimitError,
    check_json_size,
    get_or,
    json_loads,
    may_hold_surrogates,
    no_lone_surrogates,
)

#: Zip compression method of zstd members (APPNOTE 4.4.5).
ZIP_ZSTD = 93
_CHUNK = 1 << 20
_SAMPLE_MEMBER = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")


class BadMember(CalibError):
    """One member of a ``.eval`` archive cannot be read (corrupt, cut off, not JSON): a bad
    sample when it holds a sample, a bad file when it is the header. Limits (a member or
    the archive over the decompression cap) stay :class:`CalibError`: the file is refused."""


@dataclass(frozen=True)
class Unreadable:
    """Stands in for a sample whose member could not be read; ``why`` says why."""

    why: str


class _Archive:
    """Members of a ``.eval`` zip, decompressed under a per-member and a total cap."""

    def __init__(self, source: Source, options: LoadOptions) -> None:
        self.name = source.name
        self.data = source.data
        self.cap = options.max_decompressed_bytes
        self.options = options
        self.total = 0
        try:
            self.zf = zipfile.ZipFile(io.BytesIO(self.data))
        except zipfile.BadZipFile:
            raise CalibError(self._truncated_message()) from None
        except (NotImplementedError, ValueError, OSError, EOFError, struct.error) as exc:
            raise CalibError(f"{self.name}: a damaged .eval archive that cannot be opened ({exc})") from None
        self.infos = {i.filename: i for i in self.zf.infolist()}
        if not any(n.startswith("samples/") for n in self.infos) and "header.json" not in self.infos \
                and "_journal/start.json" not in self.infos:
            raise CalibError(
                f"{self.name}: a zip archive but not an Inspect AI .eval log "
                "(no header.json, _journal/start.json or samples/ inside)"
            )

    def _truncated_message(self) -> str:
        """Say where a zip without its central directory stops, by walking local headers."""
        if self.data[:4] != b"PK\x03\x04":
            return f"{self.name}: not a zip archive, so not an Inspect .eval log (a .eval log is a zip)"
        pos, complete, last = 0, [], None
        while self.data[pos:pos + 4] == b"PK\x03\x04" and pos + 30 <= len(self.data):
            _, _, flag, _, _, _, _, csize, _, nlen, elen = struct.unpack("<IHHHHHIIIHH", self.data[pos:pos + 30])
            name = self.data[pos + 30:pos + 30 + nlen].decode("utf-8", "replace")
            end = pos + 30 + nlen + elen + csize
            if flag & 0x08 or end > len(self.data):
                last = name
                break
            complete.append(name)
            pos = end
        samples = sum(n.startswith("samples/") for n in complete)
        where = f"it ends inside {last}" if last else "its table of contents is missing"
        return (f"{self.name}: the .eval archive is incomplete (truncated or still being written): {where}, "
                f"after {samples} complete sample file(s). Copy the finished log again, or let the run end")

    def has(self, name: str) -> bool:
        return name in self.infos

    def read(self, name: str) -> bytes:
        info = self.infos[name]
        if info.file_size > self.cap:
            raise CalibError(f"{self.name}: member {name} declares {info.file_size:,} bytes decompressed, "
                             f"over the {self.cap:,} limit; refused (raise the limit if this log is genuine)")
        if info.compress_type == ZIP_ZSTD:
            out = self._zstd(info)
        else:
            try:
                with self.zf.open(info) as fh:
                    out = self._capped(fh, name)
            except CalibError:  # the decompression cap (_capped): the file is refused
                raise
            except NotImplementedError:
                raise BadMember(f"{self.name}: member {name} uses zip compression method "
                                 f"{info.compress_type}, which calib cannot read") from None
            except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, ValueError, OSError) as exc:
                # RuntimeError: an encrypted member; the others: damaged data or headers
                raise BadMember(f"{self.name}: member {name} is corrupt ({exc})") from None
        self.total += len(out)
        if self.total > self.cap:
            raise CalibError(f"{self.name}: the archive decompresses to more than {self.cap:,} bytes; refused "
                             "(raise the limit if this log is genuine)")
        return out

    def _capped(self, fh: Any, name: str, declared: int | None = None) -> bytes:
        """Read ``fh`` to its end, refusing more than the cap, or more than ``declared``
        bytes (the member's own size: more is a corrupt member, refused as it inflates)."""
        buf = io.BytesIO()
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                return buf.getvalue()
            buf.write(chunk)
            if buf.tell() > self.cap:
                raise CalibError(f"{self.name}: member {name} decompresses to more than {self.cap:,} bytes; "
                                 "refused (a zip bomb?)")
            if declared is not None and buf.tell() > declared:
                raise BadMember(f"{self.name}: member {name} is corrupt (it inflates past the "
                                f"{declared:,} bytes it declares)")

    def _zstd(self, info: zipfile.ZipInfo) -> bytes:
        off = info.header_offset
        head = self.data[off:off + 30]
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise BadMember(f"{self.name}: member {info.filename} is corrupt (bad local header)")
        nlen, elen = struct.unpack("<HH", head[26:30])
        start = off + 30 + nlen + elen
        comp = self.data[start:start + info.compress_size]
        if len(comp) < info.compress_size:
            raise BadMember(f"{self.name}: member {info.filename} is cut off (file truncated?)")
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(comp), read_across_frames=True)
            out = self._capped(reader, info.filename, info.file_size)
        except zstandard.ZstdError as exc:
            raise BadMember(f"{self.name}: member {info.filename} is corrupt (zstd: {exc})") from None
        if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
            raise BadMember(f"{self.name}: member {info.filename} is corrupt or cut off "
                             f"(expected {info.file_size:,} bytes with CRC {info.CRC:08x}, got {len(out):,})")
        return out

    def json(self, name: str) -> Any:
        """One member parsed, under the JSON limits: its declared size is checked before
        it is inflated, its parse cost (:func:`calib.readers.jsonl.parse_cost`) and nesting
        depth before and while it is parsed; over them it is a :class:`BadMember`."""
        declared = self.infos[name].file_size
        try:
            if declared > self.options.max_json_bytes:  # zipfile never inflates past it
                raise JsonLimitError(
                    f"member {name} declares {declared / 2**20:,.1f} MB of JSON, over the "
                    f"{self.options.max_json_bytes / 2**20:,.0f} MB one JSON document may hold "
                    "(LoadOptions.max_json_bytes; on the dashboard CALIB_MAX_JSON_MB)")
            raw = self.read(name)
            check_json_size(raw, f"member {name}", self.options)
            try:
                return json_loads(raw)
            except JsonLimitError as exc:  # nested too deeply: say which member
                raise JsonLimitError(f"member {name} cannot be read: {exc}") from None
        except JsonLimitError as exc:
            raise BadMember(f"{self.name}: {exc}") from None
        except CalibError:  # from read(): a corrupt member stays a BadMember, the caps stay file-level
            raise
        except ValueError as exc:
            raise BadMember(f"{self.name}: member {name} is not valid JSON ({exc})") from None

    def sample_members(self, order: list[str]) -> list[str]:
        rank = {sid: i for i, sid in enumerate(order)}

        def key(n: str) -> tuple[int, int, str]:
            m = _SAMPLE_MEMBER.match(n)
            if not m:
                return (0, 10**12, n)
            return (int(m.group("epoch")), rank.get(m.group("id"), 10**12), n)

        return sorted((n for n in self.infos if n.startswith("samples/") and n.endswith(".json")), key=key)


def _open_eval(source: Source, options: LoadOptions) -> tuple[dict[str, Any], Iterator[tuple[str, Any]], int, str]:
    """Header, an iterator of ``(member, sample)``, the sample count, and a description."""
    ar = _Archive(source, options)
    if ar.has("header.json"):
        header = ar.json("header.json")
    elif ar.has("_journal/start.json"):
        header = ar.json("_journal/start.json")
        if isinstance(header, dict):
            header.setdefault("status", "started")
    else:
        header = {}
    if not isinstance(header, dict):
        raise CalibError(f"{source.name}: header.json is not a JSON object")
    listed = get_or(header, "eval.dataset.sample_ids")
    ids = [str(x) for x in listed] if isinstance(listed, list) else []
    members = ar.sample_members(ids)
    methods = {ar.infos[n].compress_type for n in ar.infos}
    comp = "zstd" if ZIP_ZSTD in methods else "deflate" if zipfile.ZIP_DEFLATED in methods else "stored"

    def gen() -> Iterator[tuple[str, Any]]:
        for m in members:
            try:
                sample = ar.json(m)
            except BadMember as exc:  # one unreadable sample is a bad sample, not a bad archive
                sample = Unreadable(str(exc).removeprefix(f"{source.name}: "))
            yield m, sample

    return header, gen(), len(members), f".eval archive, {comp} members"


def _open_json(
    source: Source, options: LoadOptions,
) -> tuple[dict[str, Any], Iterator[tuple[str, Any]], int, str]:
    """Header (the log object), ``(samples[i], sample)`` pairs, the count, a description.

    The whole log is parsed at once, so its :func:`~calib.readers.jsonl.parse_cost` is checked
    against ``options.max_parse_bytes`` first (a larger log is refused: convert it to
    ``.eval``, whose samples are parsed one at a time). A sample nested too deeply to
    parse is a bad sample; the samples after it cannot be found and are lost with it."""
    try:
        check_json_size(source.data, "the .json log", options, whole_file=True)
        text = source.data.decode("utf-8-sig")
    except JsonLimitError as exc:
        raise CalibError(f"{source.name}: {exc}; convert it to .eval (inspect log convert --to eval), "
                         "whose samples are read one at a time") from None
    except UnicodeDecodeError as exc:
        raise CalibError(f"{source.name}: not UTF-8 text (byte {exc.start})") from None
    try:
        obj = json_loads(text)
    except JsonLimitError:
        obj = _samples_before_too_deep(source.name, text)
        obj = no_lone_surrogates(obj) if may_hold_surrogates(text) else obj
    except json.JSONDecodeError as exc:
        ids = re.findall(r'"id":\s*("(?:[^"\\]|\\.)*"|-?\d+),\s*"epoch"', text[: exc.pos])
        last = f"; the last sample that starts before it is {json.loads(ids[-1])}" if ids else ""
        cut = "it ends before the JSON does (file truncated?)" if exc.pos >= len(text.rstrip()) - 1 else exc.msg
        raise CalibError(
            f"{source.name}: not a complete Inspect JSON log: {cut} at line {exc.lineno}, column {exc.colno}{last}"
        ) from None
    if not isinstance(obj, dict) or "eval" not in obj:
        raise CalibError(f"{source.name}: not an Inspect AI log (a JSON object with 'eval' and 'samples')")
    samples = obj.get("samples")
    if samples is None:
        samples = []
    if not isinstance(samples, list):
        raise CalibError(f"{source.name}: 'samples' is not a list")
    return obj, ((f"samples[{i}]", s) for i, s in enumerate(samples)), len(samples), ".json log"


def _samples_before_too_deep(name: str, text: str) -> dict[str, Any]:
    """The log with the samples that precede the first one nested too deeply, that one
    as :class:`Unreadable`, and nothing after (where it ends is unknown). The top-level
    keys are read one value at a time, and the samples one at a time."""
    dec = json.JSONDecoder()
    ws = re.compile(r"[ \t\r\n]*")
    pos = ws.match(text, 0).end()  # type: ignore[union-attr]
    log: dict[str, Any] = {}
    if text[pos:pos + 1] != "{":
        raise CalibError(f"{name}: not an Inspect AI log: {TOO_DEEP}")
    pos += 1
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        key, pos = dec.raw_decode(text, pos) if text[pos:pos + 1] == '"' else (None, pos)
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if not isinstance(key, str) or text[pos:pos + 1] != ":":
            raise CalibError(f"{name}: not an Inspect AI log: {TOO_DEEP}")
        pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
        if key == "samples" and text[pos:pos + 1] == "[":
            samples: list[Any] = []
            log["samples"] = samples
            pos += 1
            while True:
                pos = ws.match(text, pos).end()  # type: ignore[union-attr]
                if text[pos:pos + 1] in ("]", ""):
                    break
                try:
                    sample, pos = dec.raw_decode(text, pos)
                except RecursionError:
                    samples.append(Unreadable(f"samples[{len(samples)}] cannot be read: {TOO_DEEP}; the "
                                              "samples after it cannot be found and are not read"))
                    return log
                samples.append(sample)
                pos = ws.match(text, pos).end()  # type: ignore[union-attr]
                pos += text[pos:pos + 1] == ","
        else:
            try:
                log[key], pos = dec.raw_decode(text, pos)
            except RecursionError:
                raise CalibError(f"{name}: the log's {key!r} cannot be read: {TOO_DEEP}") from None
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos:pos + 1] != ",":
            return log
        pos += 1
