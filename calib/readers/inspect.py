"""Reader for Inspect AI evaluation logs: ``.eval`` archives and ``.json`` logs.

Layout (read from logs written by inspect_ai 0.3.180 and 0.3.285):

- ``.eval`` is a zip: ``header.json`` (eval spec, plan, results, status),
  ``samples/<id>_epoch_<n>.json`` (one file per sample and epoch),
  ``summaries.json``, ``reductions.json`` and ``_journal/`` (``start.json`` holds
  the eval spec of a run that has not finished). Inspect >= 0.3.2xx compresses the
  members with zstd (zip method 93), which Python's ``zipfile`` reads only from
  3.14: those members are decompressed here with the ``zstandard`` package; older
  logs use deflate, read by ``zipfile``. No member, and not the archive as a whole,
  may decompress to more than ``options.max_decompressed_bytes`` (a zip bomb is
  refused); sizes and CRCs are checked.
- ``.json`` is one object: ``{"version", "status", "eval", "plan", "results",
  "samples": [...], "reductions"}``.

Per sample (``samples[i]``): ``id``, ``epoch``, ``target``, ``output.completion``,
``output.choices[0].logprobs.content[t]`` (token, logprob, top_logprobs) and
``scores[<scorer>]`` with ``value``, ``answer``, ``metadata``.

Outcome
    The score value of the first scorer (``options.outcome_key`` names another, or
    ``scorer.key`` for scorers returning a dict): ``"C"`` right, ``"I"``/``"N"`` wrong,
    booleans, 0/1, ``"correct"``/``"incorrect"``. Partial credit (``"P"``, 0.5) is
    not a binary outcome and is reported.
Stated confidence (the default), first found of
    ``options.confidence_key`` (a dotted path in the score, then the sample); the
    score's metadata (``confidence``, ``stated_confidence``, ``conf``, ``certainty``,
    ``probability``); the sample's metadata and store; a JSON object with such a key
    in the completion text; ``confidence: 85%`` or ``85% confident`` in the text.
    What the model wrote (the completion's text and JSON) is read per sample by its
    written form (:func:`written_form`): ``95%`` is 0.95, ``0.6`` (a decimal from 0 to
    1: ``.6``, ``1.0``, ``0.0``, a JSON float) a probability, and an integer (``65``,
    ``1``, ``0``) or a decimal above 1 a bare number, on the scale detected from the
    log's bare numbers (65 is 0.65 when they are on 0-100; ``1`` is then 1%, but a
    probability 1 when every bare number is 0 or 1). Metadata values are bare numbers
    (a scorer may store 65.0). The forms are counted in ``report.forms`` and a note;
    see :func:`calib.scale.read_scale`.
Answer-letter probability
    With ``confidence_key="logprob"`` the confidence of every sample is
    ``exp(logprob)`` of the token that spells the answer letter (the parsed answer;
    the token after "answer" in a JSON reply, else the last matching token), a
    probability on 0-1. ``confidence_key="stated|logprob"`` uses the stated
    confidence and falls back to it per sample. Token probability and stated
    confidence are different quantities, so they are mixed only when asked.

Bad samples
    An unreadable member (corrupt, cut off, not valid JSON: ``unreadable sample``), a
    sample whose fields have the wrong JSON type (``"scores": [...]``, ``"output":
    "text"``: ``malformed sample``, :func:`_malformed`) or with a score value that is
    not right/wrong is one bad sample, named by its id and member, and every other
    sample is kept. The header, the archive as a whole and the decompression limits
    stay file-level: such a log is refused.

A log with outcomes but no stated confidence at all (Inspect's ``choice()`` scorer)
raises :class:`~calib.errors.CalibError` saying so and how to get one; the error
carries the load report (every sample as "no confidence") as ``exc.report``.
"""

from __future__ import annotations

import io
import json
import math
import re
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import zstandard

from calib.errors import CalibError
from calib.loading import (
    TOO_DEEP,
    JsonLimitError,
    LoadOptions,
    Source,
    check_json_size,
    json_loads,
    may_hold_surrogates,
    no_lone_surrogates,
)
from calib.loadreport import LoadReport
from calib.readers.logprobs import IssueCollector, as_number, get_or, get_path, is_missing, short_text
from calib.rows import Judgments
from calib.scale import (
    AMBIGUOUS,
    FORM_NUMBER,
    FORM_PERCENT,
    FORM_PROBABILITY,
    OUTSIDE,
    Scale,
    ScaleReading,
    onto_ends,
    read_scale,
)
from calib.scale import OK as SCALE_OK

#: Zip compression method of zstd members (APPNOTE 4.4.5).
ZIP_ZSTD = 93
#: Keys holding a stated confidence in score / sample metadata.
CONF_KEYS = ("confidence", "stated_confidence", "conf", "certainty", "probability")
#: ``confidence_key`` values choosing the answer-letter token probability.
LOGPROB = "logprob"
STATED_THEN_LOGPROB = "stated|logprob"
LOGPROB_SCALE = Scale(0.0, 1.0, "0-1", "answer-letter token probability exp(logprob)")
_CHUNK = 1 << 20
_CONF_TEXT = re.compile(
    r"\bconfidence(?:\s+(?:level|score))?\b[\s\"'*:=]*(?:is|of)?[\s\"'*:=]*(?P<v>-?(?:\d+(?:\.\d+)?|\.\d+))\s*(?P<pct>%|percent)?",
    re.IGNORECASE,
)
_PCT_TEXT = re.compile(r"(?P<v>\d+(?:\.\d+)?)\s*(?P<pct>%|percent)\s*(?:sure|confident|certain)", re.IGNORECASE)
_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.S)
_ANSWER_TEXT = re.compile(r"ANSWER\s*:\s*\$?([A-Za-z])\b")
_SAMPLE_MEMBER = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")


# --------------------------------------------------------------------------- archive
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
        it is inflated, its parse cost (:func:`calib.loading.parse_cost`) and nesting
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

    The whole log is parsed at once, so its :func:`~calib.loading.parse_cost` is checked
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


# --------------------------------------------------------------------------- samples
#: Fields of a sample read here and the JSON types they may have (``None`` always may).
_SAMPLE_TYPES: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("scores", (dict,)), ("output", (dict,)), ("metadata", (dict,)), ("store", (dict,)),
    ("attachments", (dict,)), ("input", (str, list)), ("error", (dict, str)),
    ("epoch", (int, float, str)),
)


def _malformed(sample: dict[str, Any]) -> str | None:
    """Why a sample does not have the structure of an Inspect sample, or ``None``.

    Checks the type of each field the reader uses, so that a damaged or hand-edited
    sample ("scores": [1, 2], "output": "text") is one bad sample with its reason
    instead of an error that refuses the whole log.
    """
    for key, types in _SAMPLE_TYPES:
        v = sample.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, types)):
            want = " or ".join({dict: "an object", list: "a list", str: "a string"}.get(t, "a number") for t in types)
            return f"{key!r} is {_json_kind(v)}, not {want}"
    sid = sample.get("id")
    if sid is not None and not isinstance(sid, str | int | float):
        return f"'id' is {_json_kind(sid)}, not a string or number"
    return None


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return "a string"
    return "a number"


def completion_text(sample: dict[str, Any]) -> str:
    """The model's final text: ``output.completion``, else the first choice's message."""
    out = sample.get("output") or {}
    text = out.get("completion") if isinstance(out, dict) else None
    if not text:
        msg = get_path(out, "choices.0.message.content")
        if isinstance(msg, list):
            text = "".join(str(p.get("text", "")) for p in msg if isinstance(p, dict))
        elif isinstance(msg, str):
            text = msg
    text = text if isinstance(text, str) else ""
    return _resolve(text, sample)


def _resolve(text: str, sample: dict[str, Any]) -> str:
    """Inspect stores long strings once, as ``attachment://<hash>``."""
    if text.startswith("attachment://"):
        att = sample.get("attachments")
        return str(att.get(text[len("attachment://"):], text)) if isinstance(att, dict) else text
    return text


def outcome_of(value: Any) -> bool | None:
    """Right/wrong from an Inspect score value; ``None`` when it is not binary."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        # compared as is: float() of a 400-digit integer raises OverflowError
        return True if value == 1 else False if value == 0 else None
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("c", "correct", "true", "yes", "1", "1.0"):
            return True
        if v in ("i", "n", "incorrect", "false", "no", "0", "0.0"):
            return False
    return None


def written_form(x: float, text: str | None, *, written: bool) -> int:
    """The form (:data:`calib.scale.FORM_NUMBER`...) of a confidence ``x`` read from ``text``.

    Only what the model wrote (``written``: the completion text or a JSON object in it)
    is read by its form: a number with a decimal point from 0 to 1 (``0.6``, ``.6``,
    ``1.0``, ``0.0``; a JSON float such as ``0.6``) is a probability; an integer
    (``65``, also ``1`` and ``0``) or a decimal above 1 is a bare number, on the scale
    detected from the bare numbers of the log (``1`` is 1% when the others are on
    0-100, a probability 1 when every bare number is 0 or 1). Values in metadata are
    written by a program (a scorer may store 65.0): bare numbers, whatever their type.
    """
    if not written or not 0.0 <= x <= 1.0:
        return FORM_NUMBER
    return FORM_PROBABILITY if text is None or "." in text else FORM_NUMBER


def _parse_conf(value: Any, *, written: bool = False) -> tuple[float | None, int, bool]:
    """(number, written form, present-but-unparseable); see :func:`written_form`."""
    if value is None or is_missing(value):
        return None, FORM_NUMBER, False
    if isinstance(value, str):
        s = value.strip()
        pct = s.endswith("%")
        s = s[:-1].rstrip() if pct else s
        x = as_number(s)
        if x is None:
            return None, FORM_NUMBER, True
        return x, FORM_PERCENT if pct else written_form(x, s, written=written), False
    x = as_number(value)
    if x is None:
        return None, FORM_NUMBER, True
    # a JSON float (0.6, 1.0) is written with a point; an int (1) is not
    return x, written_form(x, None if isinstance(value, float) else str(value), written=written), False


def stated_confidence(
    sample: dict[str, Any], score: dict[str, Any], text: str, key: str | None,
) -> tuple[float | None, int, str, Any]:
    """Find the stated confidence: ``(value, written form, where, raw_if_unparseable)``.

    The form (:func:`written_form`) is :data:`~calib.scale.FORM_PERCENT` for ``85%``,
    :data:`~calib.scale.FORM_PROBABILITY` for ``0.6`` written by the model and
    :data:`~calib.scale.FORM_NUMBER` otherwise.
    """
    places: list[tuple[str, Any]] = []
    if key:
        for where, obj in (("score", score), ("score metadata", score.get("metadata") or {}),
                           ("sample", sample), ("sample metadata", sample.get("metadata") or {})):
            places.append((f"{where} {key!r}", get_path(obj, key)))
    else:
        for where, obj in (("score metadata", score.get("metadata")), ("sample metadata", sample.get("metadata")),
                           ("sample store", sample.get("store"))):
            if isinstance(obj, dict):
                places += [(f"{where} {k!r}", obj[k]) for k in CONF_KEYS if k in obj]
    # the first place holding a value decides: a "high" there is reported, not
    # silently replaced by a number found elsewhere
    for where, raw in places:
        x, form, bad = _parse_conf(raw)
        if x is not None:
            return x, form, where, None
        if bad:
            return None, FORM_NUMBER, where, raw
    if key:
        return None, FORM_NUMBER, "", None
    for m in _JSON_OBJ.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict):
            for k in CONF_KEYS:
                if k in obj:
                    x, form, bad = _parse_conf(obj[k], written=True)
                    if x is not None:
                        return x, form, "completion JSON", None
                    if bad:
                        return None, FORM_NUMBER, "completion JSON", obj[k]
    for rx in (_CONF_TEXT, _PCT_TEXT):
        m = rx.search(text)
        if m:
            x = float(m.group("v"))
            form = FORM_PERCENT if m.group("pct") else written_form(x, m.group("v"), written=True)
            return x, form, "completion text", None
    return None, FORM_NUMBER, "", None


def answer_of(score: dict[str, Any], text: str) -> str | None:
    """The parsed answer letter: the score's ``answer``, else from the completion."""
    ans = score.get("answer")
    if isinstance(ans, str) and ans.strip():
        return ans.strip()
    for m in _JSON_OBJ.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("answer"), str) and obj["answer"].strip():
            return obj["answer"].strip()
    m = _ANSWER_TEXT.search(text)
    return m.group(1) if m else None


def answer_logprob(sample: dict[str, Any], answer: str | None) -> float | None:
    """Log-probability of the token spelling the answer letter.

    The token right after one containing "answer" (a JSON reply or ``ANSWER: X``) when
    there is one, else the last token equal to the letter.
    """
    if not answer or len(answer) != 1:
        return None
    content = get_path(sample, "output.choices.0.logprobs.content")
    if not isinstance(content, list):
        return None
    toks = [(str(t.get("token", "")), t.get("logprob")) for t in content if isinstance(t, dict)]
    hits = [i for i, (tok, _) in enumerate(toks) if tok.strip().strip('"') == answer]
    if not hits:
        return None
    after = [i for i in hits if any("answer" in toks[j][0].lower() for j in range(max(0, i - 4), i))]
    lp = as_number(toks[(after or hits)[0] if after else hits[-1]][1])
    return lp if lp is not None and not math.isnan(lp) and lp <= 0 else None


def _pick_scorer(scores: dict[str, Any], outcome_key: str | None, default: str | None) -> tuple[str | None, str | None]:
    """(scorer name, key inside a dict value) for this sample."""
    if outcome_key:
        if outcome_key in scores:
            return outcome_key, None
        name, _, sub = outcome_key.partition(".")
        return (name, sub or None) if name in scores else (None, None)
    if default and default in scores:
        return default, None
    return (next(iter(scores)), None) if scores else (None, None)


# --------------------------------------------------------------------------- reader
def read(source: Source, options: LoadOptions) -> tuple[Judgments, LoadReport]:
    """Read an Inspect AI ``.eval`` or ``.json`` log into judgments."""
    is_zip = source.data[:4] == b"PK\x03\x04" or source.name.lower().endswith(".eval")
    if not source.data.strip():
        raise CalibError(f"{source.name}: the file is empty")
    header, samples, n_samples, kind = _open_eval(source, options) if is_zip else _open_json(source, options)
    mode = "stated"
    key = options.confidence_key
    if key in (LOGPROB, STATED_THEN_LOGPROB):
        mode, key = key, None
    scorers = get_or(header, "eval.scorers")
    scorer_names = [s.get("name") for s in (scorers if isinstance(scorers, list) else []) if isinstance(s, dict)]
    default_scorer = scorer_names[0] if scorer_names else None
    issues = IssueCollector(source.name, options.strict)

    pos_l: list[int] = []
    ids: list[str] = []
    epochs: list[int] = []
    # --cluster-key: a sample field (dotted path) whose value groups dependent samples
    ckey = options.cluster_key if options.cluster_key and options.cluster_key.lower() != "none" else None
    cluster_vals: list[object] = []
    conf: list[float] = []
    forms: list[int] = []
    correct: list[bool] = []
    groups: list[str] = []
    texts: list[str] = []
    where_count: Counter[str] = Counter()
    outcomes_all: list[bool] = []
    with_logprob = 0
    no_conf_ids: list[str] = []
    scorer_used: Counter[str] = Counter()
    from_lp: list[bool] = []
    group_key = options.group_key
    n = 0
    for n, (member, sample) in enumerate(samples, start=1):
        if n > options.max_rows:
            raise CalibError(f"{source.name}: more than {options.max_rows:,} samples; refused")
        if isinstance(sample, Unreadable):
            sid = m.group("id") if (m := _SAMPLE_MEMBER.match(member)) else None
            issues.bad(n, None, "unreadable sample", sample.why, sample_id=sid)
            continue
        if not isinstance(sample, dict):
            issues.bad(n, None, "not a sample", f"{member} is not a JSON object")
            continue
        problem = _malformed(sample)
        if problem:
            sid = sample.get("id")
            issues.bad(n, None, "malformed sample", f"{member}: {problem}",
                       sample_id=str(sid) if isinstance(sid, str | int) else None)
            continue
        sid = str(sample.get("id", member) if not options.id_key else get_or(sample, options.id_key, member))
        if sample.get("error"):
            err = sample["error"].get("message") if isinstance(sample["error"], dict) else sample["error"]
            issues.bad(n, None, "sample error", f"the sample failed: {short_text(err)[:120]}", sample_id=sid)
            continue
        scores = sample.get("scores") or {}
        if not isinstance(scores, dict) or not scores:
            issues.bad(n, "scores", "not scored", "the sample has no score", sample_id=sid)
            continue
        name, sub = _pick_scorer(scores, options.outcome_key, default_scorer)
        if name is None:
            issues.bad(n, "scores", "not scored", f"no score from scorer {options.outcome_key!r}", sample_id=sid)
            continue
        score = scores[name] if isinstance(scores[name], dict) else {"value": scores[name]}
        value = score.get("value")
        if sub is not None:
            value = value.get(sub) if isinstance(value, dict) else None
        elif isinstance(value, dict):
            issues.bad(n, f"scores.{name}.value", "outcome not binary",
                       f"scorer {name!r} returned several values ({', '.join(map(str, value))}); "
                       f"name one with outcome_key='{name}.<key>'", sample_id=sid)
            continue
        ok = outcome_of(value)
        if ok is None:
            issues.bad(n, f"scores.{name}.value", "outcome not binary",
                       f"score value {value!r} is not right/wrong (C/I, true/false, 1/0)", sample_id=sid)
            continue
        outcomes_all.append(ok)
        scorer_used[name] += 1
        text = completion_text(sample)
        lp = answer_logprob(sample, answer_of(score, text))
        with_logprob += lp is not None
        c: float | None = None
        form = FORM_NUMBER
        if mode in ("stated", STATED_THEN_LOGPROB):
            c, form, where, unparseable = stated_confidence(sample, score, text, key)
            if c is None and unparseable is not None and mode == "stated":
                issues.bad(n, "confidence", "confidence not a number",
                           f"stated confidence {unparseable!r} ({where}) is not a number", sample_id=sid,
                           preview=text)
                continue
        if c is None and mode in (LOGPROB, STATED_THEN_LOGPROB) and lp is not None:
            c, where = math.exp(lp), "answer-letter token exp(logprob)"
        if c is None:
            no_conf_ids.append(sid)
            looked = ("the answer letter's token logprob (output.choices[0].logprobs)" if mode == LOGPROB else
                      "score metadata, sample metadata/store and the completion text")
            issues.bad(n, "confidence", "no confidence",
                       f"no confidence found (looked in {looked}); completion: {short_text(text)[:80]!r}",
                       sample_id=sid, preview=text)
            continue
        forms.append(form)
        where_count[where] += 1
        from_lp.append(where.startswith("answer-letter"))
        pos_l.append(n)
        ids.append(sid)
        if ckey:
            cv = get_or(sample, ckey)
            cluster_vals.append(None if cv is None or isinstance(cv, dict | list) else str(cv))
        ep = as_number(sample.get("epoch"))
        epochs.append(int(ep) if ep is not None and math.isfinite(ep) else 1)
        conf.append(c)
        correct.append(ok)
        texts.append(short_text(_input_text(sample)))
        g = get_or(sample, group_key or "metadata.subject")
        groups.append("" if g is None else str(g))

    task = str(get_or(header, "eval.task", "?"))
    status = str(header.get("status", "?"))
    notes = [f"Inspect AI log ({kind}): task {task!r}, model {_h(header, 'eval.model')}, "
             f"inspect_ai {_h(header, 'eval.packages.inspect_ai')}, status {status}, {n_samples} sample(s)"]
    if status not in ("success", "?"):
        notes.append(f"the run's status is {status!r}: the log may not hold every sample")
    if scorer_used:
        s_name = scorer_used.most_common(1)[0][0]
        notes.append(f"outcome: scorer {s_name!r} value (C / true / 1 = right; I / N / false / 0 = wrong); "
                     f"right on {sum(outcomes_all):,} of {len(outcomes_all):,} scored samples")
        acc_h = _header_accuracy(header, s_name)
        if acc_h is not None and outcomes_all:
            mine = sum(outcomes_all) / len(outcomes_all)
            same = "equals" if abs(mine - acc_h) < 1e-9 else "DIFFERS from"
            notes.append(f"accuracy over scored samples {mine:.4f} {same} the log's own accuracy {acc_h:.4f}")

    fields = {"outcome": f"scores.{scorer_used.most_common(1)[0][0]}.value" if scorer_used else None,
              "confidence": ", ".join(f"{w} ({k})" for w, k in where_count.most_common()) or None,
              "id": "id", "group": group_key or ("metadata.subject" if any(groups) else None)}

    if not conf:
        report = _report(source, n, issues, fields, None, notes)
        if outcomes_all and no_conf_ids:
            head = (f"{source.name}: the log has outcomes for {len(outcomes_all):,} scored samples (scorer "
                    f"{scorer_used.most_common(1)[0][0]!r}) but no confidence")
            how = ('To get a stated confidence, ask the model for one (e.g. reply {"answer": "B", '
                   '"confidence": 85}) and have the scorer keep it, Score(..., metadata={"confidence": 85}); '
                   "for token probabilities, generate with GenerateConfig(logprobs=True, top_logprobs=5).")
            if mode == LOGPROB:
                msg = (f"{head}: no sample has a token log-probability for its answer letter "
                       f"({_ids(no_conf_ids)}). {how}")
            else:
                hint = (f" Its samples carry the answer letter's token log-probability ({with_logprob} of "
                        f"{len(outcomes_all)}): load with confidence_key='{LOGPROB}' (command line: "
                        f"--confidence-key {LOGPROB}) to use exp(logprob) as the confidence."
                        if with_logprob and mode == "stated" else "")
                msg = f"{head}: no sample states one ({_ids(no_conf_ids)}).{hint} {how}"
            err = CalibError(msg)
        else:
            first = issues.log.issues()[0].message() if issues.log.kept else "the log has no samples"
            err = CalibError(f"{source.name}: no usable sample; first problem: {first}")
        err.report = report  # type: ignore[attr-defined]
        raise err

    values = np.asarray(conf, dtype=np.float64)
    lp_rows = np.asarray(from_lp, dtype=bool)
    keep = np.ones(values.size, dtype=bool)
    reading = None
    if mode == LOGPROB or lp_rows.all():
        # token probabilities are probabilities: no scale to detect or override
        scale = LOGPROB_SCALE
        values, _ = onto_ends(values, scale)
        bad = np.where(scale.contains(values), SCALE_OK, OUTSIDE)
    else:
        # each stated value by its written form ("95%", "0.6", "65"), bare numbers by the bulk rule
        st = ~lp_rows
        try:
            reading = read_scale(values[st], np.asarray(forms, dtype=np.int8)[st], given=options.rescale,
                                 mixed=options.mixed_scales)
        except CalibError as exc:
            raise CalibError(f"{source.name}: {exc}") from None
        scale = reading.scale
        raw = values
        values = values.copy()
        values[st] = reading.stated
        # fallback rows hold probabilities; put them on the stated scale of the others
        values[lp_rows] = scale.to_stated(raw[lp_rows])
        bad = np.full(values.size, SCALE_OK, dtype=np.int8)
        bad[st] = reading.bad
        bad[lp_rows] = np.where(scale.contains(values[lp_rows]), SCALE_OK, OUTSIDE)
        notes.extend(reading.notes)
        notes.extend(f"warning: {w}" for w in reading.warnings)
    st_index = np.cumsum(~lp_rows) - 1  # position among the stated rows, for reading.why
    for i in np.flatnonzero(bad != SCALE_OK):
        if reading is not None and not lp_rows[i]:
            why = reading.why(int(st_index[i]), float(raw[i]))
            shown = raw[i]
        else:
            why = f"is outside the {scale.name} scale [{scale.lo:g}, {scale.hi:g}]"
            shown = values[i]
        issues.bad(pos_l[i], "confidence", "ambiguous scale" if bad[i] == AMBIGUOUS else "outside the scale",
                   f"confidence {shown:.12g} {why}", sample_id=ids[i])
        keep[i] = False
    if not keep.any():
        first = issues.log.issues()[0].message()
        raise CalibError(f"{source.name}: no usable sample; first problem: {first}")
    multi_epoch = max(epochs) > 1
    item = [f"{i}#{e}" if multi_epoch else i for i, e in zip(ids, epochs, strict=True)]
    sel = np.flatnonzero(keep)
    stated = values[sel]
    rows = Judgments(
        stated=stated,
        prob=scale.to_prob(stated),
        correct=np.asarray(correct, dtype=bool)[sel],
        line=np.asarray(pos_l, dtype=np.int64)[sel],
        item_id=np.asarray(item, dtype=str)[sel],
        scale=scale,
        group=np.asarray(groups, dtype=str)[sel] if any(groups) else None,
        options=None,
        text=np.asarray(texts, dtype=str)[sel],
        # epochs of one sample are dependent: the sample is the cluster (calib.clusters)
        cluster=(np.asarray(cluster_vals, dtype=object)[sel] if ckey
                 else np.asarray(ids, dtype=object)[sel] if multi_epoch else None),
        cluster_how=f"field {ckey!r}" if ckey else "Inspect epochs: sample id" if multi_epoch else "",
    )
    if mode == LOGPROB:
        notes.append("confidence: exp(logprob) of the token spelling the answer letter (a token probability, "
                     "not a stated confidence), on 0-1")
    else:
        notes.append("confidence: " + "; ".join(f"{w} on {k:,} sample(s)" for w, k in where_count.most_common()))
        if with_logprob and mode == "stated":
            notes.append(f"{with_logprob:,} sample(s) also carry the answer letter's token logprob; "
                         f"confidence_key='{LOGPROB}' audits exp(logprob) instead")
    if no_conf_ids:
        notes.append(f"no confidence on {len(no_conf_ids):,} sample(s): {_ids(no_conf_ids)}")
    if multi_epoch:
        notes.append("several epochs: one row per sample and epoch (item id 'id#epoch')")
        if options.cluster_key is None:
            notes.append(f"{max(epochs)} epochs of {len(set(ids)):,} samples: intervals resample samples "
                         "(the epochs of a sample are one cluster); --cluster-key none treats rows as independent")
    if rows.group is not None:
        notes.append(f"group: {fields['group']}")
    return rows, _report(source, n, issues, fields, scale, notes, kept=int(sel.size), reading=reading)


def _report(source: Source, n: int, issues: IssueCollector, fields: dict[str, str | None],
            scale: Scale | None, notes: list[str], kept: int = 0, reading: ScaleReading | None = None) -> LoadReport:
    return LoadReport(
        source=source.name, format="inspect", lines_read=n, blank=0, kept=kept, dropped=issues.dropped,
        dropped_by_reason=dict(issues.log.counts), issues=issues.log.issues(), fields=fields,
        scale=None if scale is None else scale.to_dict(), notes=tuple(notes),
        forms={} if reading is None else dict(reading.forms),
        warnings=() if reading is None else reading.warnings,
    )


def _ids(ids: list[str], k: int = 8) -> str:
    if not ids:
        return "none"
    head = ", ".join(ids[:k])
    return f"samples {head}{f' and {len(ids) - k} more' if len(ids) > k else ''}"


def _h(header: dict[str, Any], path: str) -> str:
    v = get_or(header, path)
    return "?" if v is None else str(v)


def _header_accuracy(header: dict[str, Any], scorer: str) -> float | None:
    scores = get_or(header, "results.scores")
    for s in scores if isinstance(scores, list) else []:
        if isinstance(s, dict) and s.get("name") == scorer:
            return as_number(get_path(s, "metrics.accuracy.value"))
    return None


def _input_text(sample: dict[str, Any]) -> str:
    inp = sample.get("input")
    if isinstance(inp, str):
        return _resolve(inp, sample)
    if isinstance(inp, list):
        for msg in reversed(inp):
            if isinstance(msg, dict) and msg.get("role") == "user":
                c = msg.get("content")
                if isinstance(c, str):
                    return _resolve(c, sample)
                if isinstance(c, list):
                    return " ".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
    return ""
