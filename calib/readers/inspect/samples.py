"""What one Inspect sample says: its outcome, its stated confidence, its answer letter's
token probability, its texts; and the few header fields the notes quote."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from calib.readers.jsonl import as_number, get_or, get_path, is_missing
from calib.scale import FORM_NUMBER, FORM_PERCENT, FORM_PROBABILITY, Scale

#: Keys holding a stated confidence in score / sample metadata.
CONF_KEYS = ("confidence", "stated_confidence", "conf", "certainty", "probability")
#: ``confidence_key`` values choosing the answer-letter token probability.
LOGPROB = "logprob"
STATED_THEN_LOGPROB = "stated|logprob"
LOGPROB_SCALE = Scale(0.0, 1.0, "0-1", "answer-letter token probability exp(logprob)")
_CONF_TEXT = re.compile(
    r"\bconfidence(?:\s+(?:level|score))?\b[\s\"'*:=]*(?:is|of)?[\s\"'*:=]*(?P<v>-?(?:\d+(?:\.\d+)?|\.\d+))\s*(?P<pct>%|percent)?",
    re.IGNORECASE,
)
_PCT_TEXT = re.compile(r"(?P<v>\d+(?:\.\d+)?)\s*(?P<pct>%|percent)\s*(?:sure|confident|certain)", re.IGNORECASE)
_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.S)
_ANSWER_TEXT = re.compile(r"ANSWER\s*:\s*\$?([A-Za-z])\b")

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
