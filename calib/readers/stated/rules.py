"""The stated reader's names, reasons and value rules, shared by both paths.

Each rule takes one value as Python's json returns it; the columnar path applies the
same rules to each distinct value of a column, so both paths agree by construction.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from calib.readers.jsonl import get_or

CONFIDENCE_KEYS: tuple[str, ...] = (
    "confidence", "stated_confidence", "verbalized_confidence", "verbal_confidence",
    "confidence_score", "conf", "probability", "prob", "p", "p_correct", "prob_correct",
    "p_true", "certainty", "score",
)
OUTCOME_KEYS: tuple[str, ...] = (
    "correct", "is_correct", "correctness", "is_right", "y", "label", "outcome", "human",
    "human_label", "judgment", "verdict", "result", "passed", "success", "hit", "match",
    "exact_match", "em", "acc", "accuracy", "score",
)
PREDICTION_KEYS: tuple[str, ...] = (
    "pred", "prediction", "predicted", "predicted_answer", "pred_answer", "model_answer",
    "answer", "response", "output", "choice",
)
GOLD_KEYS: tuple[str, ...] = (
    "gold", "gold_answer", "target", "reference", "ground_truth", "expected",
    "expected_answer", "correct_answer", "answer_key", "true_answer", "solution", "label",
    "correct",
)
ID_KEYS: tuple[str, ...] = (
    "id", "item_id", "question_id", "sample_id", "example_id", "doc_id", "task_id", "qid",
    "uid", "uuid", "idx", "index",
)
TEXT_KEYS: tuple[str, ...] = ("question", "prompt", "input", "query", "problem", "instruction", "text")

TRUE_TOKENS = frozenset({"true", "t", "yes", "y", "1", "1.0", "c", "correct", "right", "pass", "passed"})
FALSE_TOKENS = frozenset({"false", "f", "no", "n", "0", "0.0", "i", "incorrect", "wrong", "fail", "failed"})

#: Longest question text kept per row (characters, the last one an ellipsis).
TEXT_CHARS = 200
#: Group of a line without the group field.
MISSING_GROUP = "(missing)"

# one reason per bad line; the same categories as the other line readers
R_MISSING_CONF = "missing confidence"
R_NON_NUMERIC = "non-numeric confidence"
R_NOT_FINITE = "NaN/Infinity"
R_MISSING_OUTCOME = "missing outcome"
R_BAD_OUTCOME = "unknown outcome token"
R_OUTSIDE = "outside the scale"
R_AMBIGUOUS = "ambiguous scale"
R_DUPLICATE = "duplicate key"

_OK, _MISSING, _NON_NUMERIC, _NOT_FINITE, _BAD = 0, 1, 2, 3, 4
_CONF_REASON = {_MISSING: R_MISSING_CONF, _NON_NUMERIC: R_NON_NUMERIC, _NOT_FINITE: R_NOT_FINITE}
_OUT_REASON = {_MISSING: R_MISSING_OUTCOME, _BAD: R_BAD_OUTCOME}
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


# ------------------------------------------------------------------ value rules
# Each rule takes one value as Python's json returns it; the fast path applies the
# same rules to each distinct value of a column, so both paths agree by construction.


def _num(x: float) -> str:
    """A float as JSON would write it, without a trailing ``.0`` (``3.0`` -> ``3``)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r


def _show(v: Any) -> str:
    """A value for a message (JSON-like, cut short)."""
    if isinstance(v, bool):
        s = "true" if v else "false"
    elif isinstance(v, int):
        s = str(v)
    elif isinstance(v, float):
        s = _num(v)
    else:
        s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 60 else s[:59] + "…"


def _conf_value(v: Any) -> tuple[int, float, bool]:
    """``(status, value, written_as_percent)`` of a confidence value."""
    if v is None:
        return _MISSING, math.nan, False
    if isinstance(v, bool):
        return _NON_NUMERIC, math.nan, False
    if isinstance(v, int | float):
        try:
            x = float(v)
        except OverflowError:  # an integer literal too large for a float
            return _NOT_FINITE, math.nan, False
        return (_OK if math.isfinite(x) else _NOT_FINITE), x, False
    if isinstance(v, str):
        s = v.strip()
        pct = s.endswith("%")
        if pct:
            s = s[:-1].rstrip()
        if not _NUMBER.fullmatch(s):
            return _NON_NUMERIC, math.nan, False
        x = float(s)
        return (_OK if math.isfinite(x) else _NOT_FINITE), x, pct
    return _NON_NUMERIC, math.nan, False


def _outcome_value(v: Any) -> tuple[int, bool]:
    """``(status, correct)`` of an outcome value."""
    if v is None:
        return _MISSING, False
    if isinstance(v, bool):
        return _OK, v
    if isinstance(v, int | float):
        if v == 1:
            return _OK, True
        if v == 0:
            return _OK, False
        return _BAD, False
    if isinstance(v, str):
        t = v.strip().lower()
        if t in TRUE_TOKENS:
            return _OK, True
        if t in FALSE_TOKENS:
            return _OK, False
    return _BAD, False


def _answer_key(v: Any) -> str:
    """How a prediction or gold answer is compared: trimmed, case-folded text."""
    return _label(v).strip().casefold() if isinstance(v, str) else _label(v)


def _matches(pred: Any, gold: Any) -> bool:
    key = _answer_key(pred)
    if isinstance(gold, list):
        return any(g is not None and key == _answer_key(g) for g in gold)
    return key == _answer_key(gold)


def _label(v: Any) -> str:
    """An id or group value as text."""
    if isinstance(v, str):
        return _clean(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _num(v)
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def _text(v: Any) -> str:
    if not isinstance(v, str):
        return ""
    v = _clean(v)
    return v if len(v) <= TEXT_CHARS else v[: TEXT_CHARS - 1] + "…"


def _clean(s: str) -> str:
    """Replace lone surrogates (``"\\ud800"`` is valid JSON) so the text can be printed."""
    if s.isascii():
        return s
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)
    return s


def _conf_detail(status: int, name: str, v: Any) -> str:
    if status == _MISSING:
        return f"no {name} value (the field is missing or null)"
    if status == _NOT_FINITE:
        return f"{name} is {_show(v)}, not a finite number"
    return f"{name} is {_show(v)}, not a number"


def _outcome_detail(status: int, name: str, v: Any) -> str:
    if status == _MISSING:
        return f"no {name} value (the field is missing or null)"
    return f"{name} is {_show(v)}, not an outcome (true/false, 1/0, yes/no, C/I)"


#: The value at a resolved field path, ``None`` when absent or null (the one resolver,
#: :func:`calib.readers.jsonl.get_or`, called directly: the per-line path's hot loop).
_get = get_or
