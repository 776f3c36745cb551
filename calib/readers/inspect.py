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
Answer-letter probability
    With ``confidence_key="logprob"`` the confidence of every sample is
    ``exp(logprob)`` of the token that spells the answer letter (the parsed answer;
    the token after "answer" in a JSON reply, else the last matching token), a
    probability on 0-1. ``confidence_key="stated|logprob"`` uses the stated
    confidence and falls back to it per sample. Token probability and stated
    confidence are different quantities, so they are mixed only when asked.

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
from typing import Any

import numpy as np
import zstandard

from calib.errors import CalibError
from calib.loading import LoadOptions, Source
from calib.loadreport import LoadReport
from calib.readers.logprobs import IssueCollector, as_number, get_or, get_path, is_missing, short_text
from calib.rows import Judgments
from calib.scale import Scale, detect_scale

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
    r"\bconfidence(?:\s+(?:level|score))?\b[\s\"'*:=]*(?:is|of)?[\s\"'*:=]*(?P<v>-?\d+(?:\.\d+)?)\s*(?P<pct>%|percent)?",
    re.IGNORECASE,
)
_PCT_TEXT = re.compile(r"(?P<v>\d+(?:\.\d+)?)\s*(?P<pct>%|percent)\s*(?:sure|confident|certain)", re.IGNORECASE)
_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.S)
_ANSWER_TEXT = re.compile(r"ANSWER\s*:\s*\$?([A-Za-z])\b")
_SAMPLE_MEMBER = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")


# --------------------------------------------------------------------------- archive
class _Archive:
    """Members of a ``.eval`` zip, decompressed under a per-member and a total cap."""

    def __init__(self, source: Source, options: LoadOptions) -> None:
        self.name = source.name
        self.data = source.data
        self.cap = options.max_decompressed_bytes
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
            except NotImplementedError:
                raise CalibError(f"{self.name}: member {name} uses zip compression method "
                                 f"{info.compress_type}, which calib cannot read") from None
            except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, ValueError, OSError) as exc:
                # RuntimeError: an encrypted member; the others: damaged data or headers
                raise CalibError(f"{self.name}: member {name} is corrupt ({exc})") from None
        self.total += len(out)
        if self.total > self.cap:
            raise CalibError(f"{self.name}: the archive decompresses to more than {self.cap:,} bytes; refused "
                             "(raise the limit if this log is genuine)")
        return out

    def _capped(self, fh: Any, name: str) -> bytes:
        buf = io.BytesIO()
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                return buf.getvalue()
            buf.write(chunk)
            if buf.tell() > self.cap:
                raise CalibError(f"{self.name}: member {name} decompresses to more than {self.cap:,} bytes; "
                                 "refused (a zip bomb?)")

    def _zstd(self, info: zipfile.ZipInfo) -> bytes:
        off = info.header_offset
        head = self.data[off:off + 30]
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise CalibError(f"{self.name}: member {info.filename} is corrupt (bad local header)")
        nlen, elen = struct.unpack("<HH", head[26:30])
        start = off + 30 + nlen + elen
        comp = self.data[start:start + info.compress_size]
        if len(comp) < info.compress_size:
            raise CalibError(f"{self.name}: member {info.filename} is cut off (file truncated?)")
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(comp), read_across_frames=True)
            out = self._capped(reader, info.filename)
        except zstandard.ZstdError as exc:
            raise CalibError(f"{self.name}: member {info.filename} is corrupt (zstd: {exc})") from None
        if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
            raise CalibError(f"{self.name}: member {info.filename} is corrupt or cut off "
                             f"(expected {info.file_size:,} bytes with CRC {info.CRC:08x}, got {len(out):,})")
        return out

    def json(self, name: str) -> Any:
        raw = self.read(name)
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise CalibError(f"{self.name}: member {name} is not valid JSON ({exc})") from None

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
        header.setdefault("status", "started")
    else:
        header = {}
    if not isinstance(header, dict):
        raise CalibError(f"{source.name}: header.json is not a JSON object")
    ids = [str(x) for x in (get_or(header, "eval.dataset.sample_ids") or [])]
    members = ar.sample_members(ids)
    methods = {ar.infos[n].compress_type for n in ar.infos}
    comp = "zstd" if ZIP_ZSTD in methods else "deflate" if zipfile.ZIP_DEFLATED in methods else "stored"

    def gen() -> Iterator[tuple[str, Any]]:
        for m in members:
            yield m, ar.json(m)

    return header, gen(), len(members), f".eval archive, {comp} members"


def _open_json(source: Source) -> tuple[dict[str, Any], Iterator[tuple[str, Any]], int, str]:
    try:
        text = source.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CalibError(f"{source.name}: not UTF-8 text (byte {exc.start})") from None
    try:
        obj = json.loads(text)
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


# --------------------------------------------------------------------------- samples
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
        att = sample.get("attachments") or {}
        return str(att.get(text[len("attachment://"):], text))
    return text


def outcome_of(value: Any) -> bool | None:
    """Right/wrong from an Inspect score value; ``None`` when it is not binary."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return {0: False, 1: True}.get(value) if float(value) in (0.0, 1.0) else None
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("c", "correct", "true", "yes", "1", "1.0"):
            return True
        if v in ("i", "n", "incorrect", "false", "no", "0", "0.0"):
            return False
    return None


def _parse_conf(value: Any) -> tuple[float | None, bool, bool]:
    """(number, written as a percent string, present-but-unparseable)."""
    if value is None or is_missing(value):
        return None, False, False
    if isinstance(value, str):
        s = value.strip()
        pct = s.endswith("%")
        x = as_number(s[:-1] if pct else s)
        return (x, pct, x is None)
    x = as_number(value)
    return (x, False, x is None)


def stated_confidence(
    sample: dict[str, Any], score: dict[str, Any], text: str, key: str | None,
) -> tuple[float | None, bool, str, Any]:
    """Find the stated confidence: ``(value, percent?, where, raw_if_unparseable)``."""
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
        x, pct, bad = _parse_conf(raw)
        if x is not None:
            return x, pct, where, None
        if bad:
            return None, False, where, raw
    if key:
        return None, False, "", None
    for m in _JSON_OBJ.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict):
            for k in CONF_KEYS:
                if k in obj:
                    x, pct, bad = _parse_conf(obj[k])
                    if x is not None:
                        return x, pct, "completion JSON", None
                    if bad:
                        return None, False, "completion JSON", obj[k]
    for rx in (_CONF_TEXT, _PCT_TEXT):
        m = rx.search(text)
        if m:
            return float(m.group("v")), bool(m.group("pct")), "completion text", None
    return None, False, "", None


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
    header, samples, n_samples, kind = _open_eval(source, options) if is_zip else _open_json(source)
    mode = "stated"
    key = options.confidence_key
    if key in (LOGPROB, STATED_THEN_LOGPROB):
        mode, key = key, None
    scorer_names = [s.get("name") for s in (get_or(header, "eval.scorers") or []) if isinstance(s, dict)]
    default_scorer = scorer_names[0] if scorer_names else None
    issues = IssueCollector(source.name, options.strict)

    pos_l: list[int] = []
    ids: list[str] = []
    epochs: list[int] = []
    conf: list[float] = []
    pct_any = False
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
        if not isinstance(sample, dict):
            issues.bad(n, None, "not a sample", f"{member} is not a JSON object")
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
        pct = False
        if mode in ("stated", STATED_THEN_LOGPROB):
            c, pct, where, unparseable = stated_confidence(sample, score, text, key)
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
        pct_any |= pct
        where_count[where] += 1
        from_lp.append(where.startswith("answer-letter"))
        pos_l.append(n)
        ids.append(sid)
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
    if mode == LOGPROB or lp_rows.all():
        # token probabilities are probabilities: no scale to detect or override
        scale = LOGPROB_SCALE
    else:
        scale = options.rescale or detect_scale(values[~lp_rows], percent_strings=pct_any)
        # fallback rows hold probabilities; put them on the stated scale of the others
        values = np.where(lp_rows, scale.to_stated(values), values)
    inside = scale.contains(values)
    keep = np.ones(values.size, dtype=bool)
    for i in np.flatnonzero(~inside):
        issues.bad(pos_l[i], "confidence", "outside the scale",
                   f"confidence {values[i]:g} is outside the {scale.name} scale [{scale.lo:g}, {scale.hi:g}]",
                   sample_id=ids[i])
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
    if rows.group is not None:
        notes.append(f"group: {fields['group']}")
    return rows, _report(source, n, issues, fields, scale, notes, kept=int(sel.size))


def _report(source: Source, n: int, issues: IssueCollector, fields: dict[str, str | None],
            scale: Scale | None, notes: list[str], kept: int = 0) -> LoadReport:
    return LoadReport(
        source=source.name, format="inspect", lines_read=n, blank=0, kept=kept, dropped=issues.dropped,
        dropped_by_reason=dict(issues.log.counts), issues=issues.log.issues(), fields=fields,
        scale=None if scale is None else scale.to_dict(), notes=tuple(notes),
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
    for s in get_or(header, "results.scores") or []:
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
