"""Reader for JSONL of stated confidences: one judged item per line.

A line looks like ``{"id": "q17", "confidence": 95, "correct": true}``; ``.jsonl.gz``
arrives here already decompressed (:func:`calib.loading.read_source`).

Fields
------
Each field is found by name in the first :data:`SAMPLE_OBJECTS` objects of the
file, unless :class:`~calib.loading.LoadOptions` names it. Names are matched
ignoring case, ``_``, ``-`` and spaces (``isCorrect`` matches ``is_correct``), at
the top level first and then inside nested objects (``metadata.confidence``); the
first name of each list, in list order, that is present (not null) in at least
half of the sampled objects and whose values are of the right kind in at least
half of them wins:

- confidence (:data:`CONFIDENCE_KEYS`): a number, a numeric string (``"85"``) or a
  percent string (``"85%"``);
- outcome (:data:`OUTCOME_KEYS`): ``true``/``false``, ``1``/``0``, or one of the
  tokens in :data:`TRUE_TOKENS` / :data:`FALSE_TOKENS` (``"yes"``, ``"C"``/``"I"``
  as Inspect writes them...), case and surrounding spaces ignored;
- when no outcome field is found, the outcome is derived: a prediction
  (:data:`PREDICTION_KEYS`) equal to a gold answer (:data:`GOLD_KEYS`) is right.
  Both are compared as text with surrounding whitespace trimmed and case ignored
  (``str.casefold``); numbers are written without a trailing ``.0`` (``3.0`` equals
  ``3``); a gold *list* accepts any of its elements. ``options.extra["pred_key"]``
  and ``options.extra["gold_key"]`` name them explicitly;
- item id (:data:`ID_KEYS`, a string or integer; ``""`` when absent), question
  text for the review queue (:data:`TEXT_KEYS`, strings only, cut to
  :data:`TEXT_CHARS` characters), and the group only when
  ``options.group_key`` names it (lines without it go to group ``"(missing)"``).

A key given in the options that contains a dot is read as a literal key when the
sampled objects have it, else as a path (``meta.conf`` is ``obj["meta"]["conf"]``).
The report's ``fields`` says which keys were used and its ``notes`` say how.

Scale
-----
:func:`calib.scale.read_scale` over the confidences of the lines that passed every
other check: a percent string (``"85%"``) is on 0-100 whatever the other lines say;
bare numbers (JSON numbers and numeric strings) are on ``options.rescale`` or on the
scale the bulk of them fits (:func:`calib.scale.detect_scale`: at most 5% of them
outside, reported as ``outside the scale``; a value within 1e-9 of the span beyond an
end is on it). Bare numbers in two ranges, between 0 and 1 next to numbers above 1
(0.85 and 85), are refused with both counts unless ``options.mixed_scales`` reads each
by its range; a few (at most the 5% allowance) are ``ambiguous scale`` bad lines.
``Judgments.stated`` keeps the number as written (``"85%"`` is 85) when every value has
one form; with several forms it is on the commonest form's scale (the others converted
through their probability, counted in ``report.forms`` and a note). ``Judgments.prob``
is ``scale.to_prob(stated)``. A ``--rescale`` that contradicts the values is applied and
warned about (``report.warnings``, :func:`calib.scale.rescale_warnings`).

Bad lines
---------
Every line that cannot be used is reported (:class:`~calib.loadreport.LineIssue`:
line, field, reason, detail) and every other line is kept. One reason per line,
checked in this order: ``line too long`` (bytes, ``options.max_line_chars``),
``not UTF-8``, ``invalid JSON`` (``truncated line`` for a last line without its
newline that ends inside its JSON), ``not a JSON object``, ``duplicate key`` (the
confidence, outcome, prediction or gold named twice in one object: Python's ``json``
would keep the last silently, pyarrow refuses the line), ``missing confidence``
(absent or null), ``non-numeric confidence``, ``NaN/Infinity`` (Python's ``json``
reads ``NaN``/``Infinity`` literals and ``1e400``; they are refused here), then
``missing outcome`` / ``unknown outcome token``, and last ``outside the scale`` or
``ambiguous scale``.
A ``NaN`` in a field that is not used does not drop the line. Blank lines are
counted (``report.blank``); a UTF-8 byte-order mark (at the start of the file or
of a line, as when files were concatenated) and CRLF line ends are accepted.
A line nested deeper than Python's recursion limit is ``invalid JSON`` ("nested too
deeply", :func:`calib.loading.json_loads`); an integer literal longer than Python's
4,300-digit limit is read as a float (JSON has no limit). The field sampler skips a
line over ``options.max_line_chars`` unparsed, as the per-line path reports it.

Speed
-----
The per-line path (Python's ``json`` and the rules above) costs about 7 µs a line on
a small machine: 7 s for a million lines. So lines are read in ~1 MB chunks (two
threads) by pyarrow's C++ JSON reader (:func:`pyarrow.json.read_json`, with an
explicit schema of the used fields only), and only the lines it cannot take go the
per-line way. pyarrow and Python's ``json`` do not accept the same texts, so a
chunk goes to pyarrow only when every line surely reads the same in both
(:func:`_chunk_is_clean`, a few numpy passes): each line starts with ``{`` and ends
with ``}``, is valid UTF-8, holds none of the tokens pyarrow accepts and Python does
not (``Inf``, ``-NaN``) and at most :data:`MAX_OPENERS` brackets (pyarrow's parser
recurses without limit: a line nested 30,000 deep crashes the process), and pyarrow
must return exactly one row per line. A chunk that fails this is sorted line by line
with numpy (:func:`_classify`, which also sends lines whose used field has another
JSON type than the schema's to the per-line path); pyarrow refusing a piece anyway
splits it at the row it names. Values read by pyarrow are judged by the same rule
functions as the per-line path (applied once per distinct value), and the few whose
Python reading could differ (non-finite, or beyond 2**53) are re-read line by line,
so both paths give identical rows and reports. ``read(..., fast=False)`` forces the
per-line path; the tests compare the two on the bad-input corpus, random files and
hypothesis-generated lines. ``bench/bench_loading.py`` prints the figures.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from calib.errors import CalibError
from calib.loading import JsonLimitError, LoadOptions, Source, big_int, json_loads
from calib.loadreport import EXAMPLES_PER_REASON, LineIssue, LoadReport, preview_of
from calib.rows import Judgments
from calib.scale import AMBIGUOUS as SCALE_AMBIGUOUS
from calib.scale import FORM_NUMBER, FORM_PERCENT, read_scale
from calib.scale import OK as SCALE_OK
from calib.scale import OUTSIDE as SCALE_OUTSIDE

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

#: Objects sampled from the start of the file to find the fields.
SAMPLE_OBJECTS = 1000
#: Lines scanned at most while sampling.
SAMPLE_LINES = 20_000
#: Longest question text kept per row (characters, the last one an ellipsis).
TEXT_CHARS = 200
#: Group of a line without the group field.
MISSING_GROUP = "(missing)"
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
#: Largest id/group array kept as fixed-width unicode (bytes); larger ones are objects.
MAX_FIXED_TEXT_BYTES = 256 * 1024**2

# one reason per bad line; the same categories as the other line readers
R_TOO_LONG = "line too long"
R_UTF8 = "not UTF-8"
R_JSON = "invalid JSON"
R_TRUNCATED = "truncated line"
R_NOT_OBJECT = "not a JSON object"
R_MISSING_CONF = "missing confidence"
R_NON_NUMERIC = "non-numeric confidence"
R_NOT_FINITE = "NaN/Infinity"
R_MISSING_OUTCOME = "missing outcome"
R_BAD_OUTCOME = "unknown outcome token"
R_OUTSIDE = "outside the scale"
R_AMBIGUOUS = "ambiguous scale"
R_DUPLICATE = "duplicate key"

_BOM = b"\xef\xbb\xbf"
_OK, _MISSING, _NON_NUMERIC, _NOT_FINITE, _BAD = 0, 1, 2, 3, 4
_CONF_REASON = {_MISSING: R_MISSING_CONF, _NON_NUMERIC: R_NON_NUMERIC, _NOT_FINITE: R_NOT_FINITE}
_OUT_REASON = {_MISSING: R_MISSING_OUTCOME, _BAD: R_BAD_OUTCOME}
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_ROW_HINT = re.compile(r" in row (\d+)")
#: |x| from which a float64 may not equal the integer Python's json would read.
_EXACT_INT = 2.0**53


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
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _num(v)
    if isinstance(v, str):
        return _clean(v).strip().casefold()
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


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


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    """``obj[a][b]...``; ``None`` when any step is missing, null or not an object."""
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
        if obj is None:
            return None
    return obj


# ------------------------------------------------------------------- fields
@dataclass(frozen=True)
class _Key:
    name: str
    path: tuple[str, ...]
    how: str


@dataclass(frozen=True)
class _Fields:
    confidence: _Key
    outcome: _Key | None
    pred: _Key | None
    gold: _Key | None
    group: _Key | None
    item_id: _Key | None
    text: _Key | None

    def used(self) -> list[tuple[str, _Key]]:
        roles = ("confidence", "outcome", "pred", "gold", "group", "item_id", "text")
        return [(r, getattr(self, r)) for r in roles if getattr(self, r) is not None]


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


class _Sample:
    """Paths, presence and values of the first objects of a file."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects
        self.present: Counter[tuple[str, ...]] = Counter()
        self.values: dict[tuple[str, ...], list[Any]] = {}
        for obj in objects:
            self._walk(obj, ())

    def _walk(self, obj: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for k, v in obj.items():
            path = (*prefix, k)
            if isinstance(v, dict):
                if len(path) < 3:
                    self._walk(v, path)
                continue
            if v is None:
                continue
            self.present[path] += 1
            self.values.setdefault(path, []).append(v)

    def keys(self) -> list[str]:
        return [".".join(p) for p in self.values]

    def find(
        self, names: Sequence[str], accept: Callable[[Any], bool], exclude: set[tuple[str, ...]],
    ) -> tuple[str, ...] | None:
        n = len(self.objects)
        for name in names:
            want = _norm(name)
            for depth in (1, 2, 3):
                for path, vals in self.values.items():
                    if len(path) != depth or path in exclude or _norm(path[-1]) != want:
                        continue
                    if 2 * self.present[path] < n:
                        continue
                    if 2 * sum(1 for v in vals if accept(v)) >= len(vals):
                        return path
        return None

    def path_of(self, key: str) -> tuple[str, ...]:
        if "." in key and any(key in o for o in self.objects):
            return (key,)
        return tuple(key.split("."))


def _is_conf(v: Any) -> bool:
    return _conf_value(v)[0] in (_OK, _NOT_FINITE)


def _is_outcome(v: Any) -> bool:
    return _outcome_value(v)[0] == _OK


def _is_answer(v: Any) -> bool:
    return isinstance(v, str | int | float | list)


def _is_id(v: Any) -> bool:
    return isinstance(v, str | int) and not isinstance(v, bool)


def _resolve(sample: _Sample, options: LoadOptions, name: str) -> tuple[_Fields, list[str]]:
    notes: list[str] = []
    seen = ", ".join(sample.keys()[:30]) or "none"

    def given(key: str | None) -> _Key | None:
        return None if key is None else _Key(key, sample.path_of(key), "given")

    def auto(path: tuple[str, ...] | None) -> _Key | None:
        return None if path is None else _Key(".".join(path), path, "auto-detected")

    conf = given(options.confidence_key) or auto(sample.find(CONFIDENCE_KEYS, _is_conf, set()))
    if conf is None:
        raise CalibError(
            f"{name}: no confidence field found in the first {len(sample.objects):,} objects "
            f"(looked for {', '.join(CONFIDENCE_KEYS)} holding numbers); keys seen: {seen}. "
            "Name it with --confidence-key (or --prob-key)"
        )
    outcome = given(options.outcome_key)
    pred = gold = None
    if outcome is None:
        pk, gk = options.extra.get("pred_key"), options.extra.get("gold_key")
        if pk is None and gk is None:
            outcome = auto(sample.find(OUTCOME_KEYS, _is_outcome, {conf.path}))
        if outcome is None:
            pred = given(pk) or auto(sample.find(PREDICTION_KEYS, _is_answer, {conf.path}))
            gold = given(gk) or auto(
                sample.find(GOLD_KEYS, _is_answer, {conf.path} | ({pred.path} if pred else set()))
            )
            if pred is None or gold is None:
                raise CalibError(
                    f"{name}: no outcome field found in the first {len(sample.objects):,} objects "
                    f"(looked for {', '.join(OUTCOME_KEYS)} holding true/false, 1/0, yes/no or C/I, "
                    f"and for a prediction ({', '.join(PREDICTION_KEYS)}) with a gold answer "
                    f"({', '.join(GOLD_KEYS)})); keys seen: {seen}. Name it with --outcome-key "
                    "(or --label-key)"
                )
    used = {conf.path} | {k.path for k in (outcome, pred, gold) if k is not None}
    group = given(options.group_key)
    item_id = given(options.id_key) or auto(sample.find(ID_KEYS, _is_id, used))
    text = auto(sample.find(TEXT_KEYS, lambda v: isinstance(v, str), used))
    fields = _Fields(conf, outcome, pred, gold, group, item_id, text)
    notes.append(f"confidence: {conf.name!r} ({conf.how})")
    if outcome is not None:
        notes.append(f"outcome: {outcome.name!r} ({outcome.how})")
    else:
        assert pred is not None and gold is not None
        notes.append(
            f"outcome: derived: prediction {pred.name!r} ({pred.how}) equals gold {gold.name!r} "
            f"({gold.how}), compared as text with whitespace trimmed and case ignored"
        )
    for label, key in (("group", group), ("id", item_id), ("text", text)):
        if key is not None:
            notes.append(f"{label}: {key.name!r} ({key.how})")
    return fields, notes


# ------------------------------------------------------------- parsed pieces
@dataclass
class _Part:
    """Rows that passed every check but the scale, and the issues of one piece."""

    line: np.ndarray
    conf: np.ndarray
    pct: np.ndarray
    correct: np.ndarray
    item_id: np.ndarray
    group: np.ndarray | None
    text: np.ndarray | None
    issues: list[LineIssue] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    blank: int = 0


@dataclass(frozen=True)
class _Ctx:
    name: str
    options: LoadOptions
    fields: _Fields
    last_line: int
    unterminated: bool
    parse_options: pj.ParseOptions | None


class _Examples:
    """Counts issues by reason, keeping the first few of each (in the order added)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.issues: list[LineIssue] = []

    def add(self, issue: LineIssue) -> None:
        self.counts[issue.reason] += 1
        if self.counts[issue.reason] <= EXAMPLES_PER_REASON:
            self.issues.append(issue)


class _Slow:
    """The per-line reference path: Python's ``json`` and the value rules."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.ex = _Examples()
        self.blank = 0
        self.rows: list[tuple[int, float, bool, bool, str, str, str]] = []

    def bad(self, no: int, fld: str | None, reason: str, detail: str, text: str) -> None:
        self.ex.add(LineIssue(no, fld, reason, detail, preview_of(text), self.ctx.name))

    def line(self, raw: bytes, no: int) -> None:
        ctx, f = self.ctx, self.ctx.fields
        if raw.startswith(_BOM):
            raw = raw[3:]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip(b" \t\r"):
            self.blank += 1
            return
        limit = ctx.options.max_line_chars
        if len(raw) > limit:
            self.bad(no, None, R_TOO_LONG, f"line is {len(raw):,} bytes, over the {limit:,} limit",
                     raw[:400].decode("utf-8", "replace"))
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.bad(no, None, R_UTF8, f"bytes that are not UTF-8 at column {exc.start + 1}",
                     raw.decode("utf-8", "replace"))
            return
        try:
            obj = json_loads(text)
        except JsonLimitError as exc:  # valid JSON, but nested deeper than Python reads
            self.bad(no, None, R_JSON, f"cannot be read: {exc}", text)
            return
        except json.JSONDecodeError as exc:
            if no == ctx.last_line and ctx.unterminated and _cut_off(text, exc):
                self.bad(no, None, R_TRUNCATED,
                         f"the last line is cut off (file truncated?): {exc.msg} (column {exc.colno})", text)
            else:
                self.bad(no, None, R_JSON, f"not valid JSON: {exc.msg} (column {exc.colno})", text)
            return
        if not isinstance(obj, dict):
            self.bad(no, None, R_NOT_OBJECT, f"expected a JSON object {{...}}, got {_kind(obj)}", text)
            return
        dup = _duplicate(text, f)
        if dup is not None:
            self.bad(no, dup, R_DUPLICATE, f"{dup!r} is given twice in one object: which value is meant is "
                     "unclear (Python's json would keep the last one silently)", text)
            return
        cv = _get(obj, f.confidence.path)
        st, x, pct = _conf_value(cv)
        if st != _OK:
            self.bad(no, f.confidence.name, _CONF_REASON[st], _conf_detail(st, f.confidence.name, cv), text)
            return
        if f.outcome is not None:
            ov = _get(obj, f.outcome.path)
            ost, y = _outcome_value(ov)
            if ost != _OK:
                self.bad(no, f.outcome.name, _OUT_REASON[ost], _outcome_detail(ost, f.outcome.name, ov), text)
                return
        else:
            assert f.pred is not None and f.gold is not None
            pv, gv = _get(obj, f.pred.path), _get(obj, f.gold.path)
            for key, v in ((f.pred, pv), (f.gold, gv)):
                if v is None:
                    self.bad(no, key.name, R_MISSING_OUTCOME, _outcome_detail(_MISSING, key.name, v), text)
                    return
            y = _matches(pv, gv)
        iv = None if f.item_id is None else _get(obj, f.item_id.path)
        gv2 = None if f.group is None else _get(obj, f.group.path)
        tv = None if f.text is None else _get(obj, f.text.path)
        self.rows.append((
            no, x + 0.0, pct, y, "" if iv is None else _label(iv),
            MISSING_GROUP if gv2 is None else _label(gv2), _text(tv),
        ))

    def part(self) -> _Part:
        f = self.ctx.fields
        cols = list(zip(*self.rows, strict=True)) if self.rows else [()] * 7
        return _Part(
            line=np.array(cols[0], dtype=np.int64),
            conf=np.array(cols[1], dtype=np.float64),
            pct=np.array(cols[2], dtype=bool),
            correct=np.array(cols[3], dtype=bool),
            item_id=np.array(cols[4], dtype=object),
            group=None if f.group is None else np.array(cols[5], dtype=object),
            text=None if f.text is None else np.array(cols[6], dtype=object),
            issues=self.ex.issues, counts=self.ex.counts, blank=self.blank,
        )


def _duplicate(text: str, f: _Fields) -> str | None:
    """The first field deciding the row (confidence, outcome, prediction, gold) named
    twice in one object of ``text``, or ``None``. A count of the quoted name first, so
    almost every line costs one ``str.count`` per field; the pyarrow path refuses such
    lines itself ("specified twice"), so both paths report them alike."""
    keys = [k.path[-1] for k in (f.confidence, f.outcome, f.pred, f.gold) if k is not None]
    if not any(text.count(json.dumps(k, ensure_ascii=False)) > 1 for k in keys):
        return None
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        names = [k for k, _ in items]
        found.extend(k for k in keys if names.count(k) > 1)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs, parse_int=big_int)
    return found[0] if found else None


def _kind(obj: Any) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "true/false"
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(type(obj), "a value")


def _cut_off(text: str, exc: json.JSONDecodeError) -> bool:
    """Did the parser run out of text (rather than meet a wrong character)?"""
    body = text.rstrip()
    if exc.msg.startswith("Unterminated string") or exc.pos >= len(body):
        return True
    rest = body[exc.pos:]
    return any(w.startswith(rest) for w in ("true", "false", "null", "NaN", "Infinity", "-Infinity"))


def _slow(lines: Sequence[bytes], numbers: Sequence[int], ctx: _Ctx) -> _Part:
    s = _Slow(ctx)
    for raw, no in zip(lines, numbers, strict=True):
        s.line(raw, int(no))
    return s.part()


# --------------------------------------------------------------- fast path
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
        return pa.string() if role in ("group", "item_id", "text") else pa.float64()
    top = kinds.most_common(1)[0][0]
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


def _chunk_is_clean(body: bytes, n: int) -> bool:
    """True when every line of ``body`` (``n`` lines, LF or CRLF ends, without the
    final newline) can go to pyarrow (the chunk-wide form of :func:`_classify`).

    Done with numpy on the bytes (about ten passes of 0.1 ms per MB, without the
    GIL) rather than ``bytes.count`` (1 ms per MB each, holding it).
    """
    b = np.frombuffer(body, dtype=np.uint8)
    if b.size < 2 or b[0] != 0x7B:  # "{"
        return False
    last = b[-2] if b[-1] == 0x0D else b[-1]
    if last != 0x7D:  # "}"
        return False
    if n > 1:
        nl = b == 0x0A
        if np.count_nonzero(nl[:-1] & (b[1:] == 0x7B)) != n - 1:
            return False
        if np.count_nonzero(nl[1:] & (b[:-1] == 0x7D)) != n - 1 and (
            b.size < 3 or np.count_nonzero(nl[2:] & (b[1:-1] == 0x0D) & (b[:-2] == 0x7D)) != n - 1
        ):
            return False
    if np.count_nonzero(b == 0x7B) + np.count_nonzero(b == 0x5B) - n > MAX_OPENERS - 1:
        return False
    if b.size >= 3 and np.any((b[:-2] == 0x49) & (b[1:-1] == 0x6E) & (b[2:] == 0x66)):  # Inf
        return False
    if b.size >= 4 and np.any((b[:-3] == 0x2D) & (b[1:-2] == 0x4E) & (b[2:-1] == 0x61) & (b[3:] == 0x4E)):
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


def _uniques(col: pa.Array) -> tuple[list[Any], np.ndarray]:
    """Distinct values (as Python values) and each row's index into them (-1: null)."""
    if pa.types.is_null(col.type):
        return [], np.full(len(col), -1, dtype=np.int64)
    d = col.dictionary_encode()
    idx = d.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
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
    col = pc.fill_null(col, fill)
    if len(col) and pc.all(pc.string_is_ascii(col)).as_py():
        width = max(1, pc.max(pc.binary_length(col)).as_py() or 0)
        padded = pc.utf8_rpad(col, width=width, padding="\x00")
        buf = padded.buffers()[2]
        start = padded.offset * width
        raw = np.frombuffer(buf, dtype=np.uint8, count=len(col) * width, offset=start)
        # ASCII bytes are their own code points: widen to UCS-4 in one step
        return raw.astype(np.uint32).view(f"<U{width}")
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)


def _fast(buf: bytes, numbers: np.ndarray, ctx: _Ctx) -> tuple[_Part, np.ndarray]:
    """Parse ``buf`` (one clean line per entry of ``numbers``) with pyarrow.

    Returns the part and the row positions whose values must be re-read line by line
    (floats beyond 2**53 in a used field). Raises :class:`_Redo` when pyarrow refuses
    the piece or does not return one row per line.
    """
    assert ctx.parse_options is not None
    n = len(numbers)
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
    f = ctx.fields
    redo = np.zeros(n, dtype=bool)
    status = np.zeros(n, dtype=np.int8)  # 0 ok, 1..: confidence issue, 10+: outcome issue
    field_of: dict[int, _Key] = {}
    value_of: dict[int, Callable[[int], Any]] = {}

    # confidence
    ccol = _column(tb, f.confidence.path)
    pct = np.zeros(n, dtype=bool)
    if pa.types.is_floating(ccol.type) or pa.types.is_null(ccol.type):
        x = ccol.to_numpy(zero_copy_only=False).astype(np.float64) if len(ccol) else np.zeros(0)
        null = ccol.is_null().to_numpy(zero_copy_only=False)
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
    status[:] = cst
    field_of.update({int(s): f.confidence for s in (_MISSING, _NON_NUMERIC, _NOT_FINITE)})
    value_of.update({int(s): cval for s in (_MISSING, _NON_NUMERIC, _NOT_FINITE)})

    # outcome
    if f.outcome is not None:
        ocol = _column(tb, f.outcome.path)
        if pa.types.is_boolean(ocol.type):
            y = ocol.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
            ost = np.where(ocol.is_null().to_numpy(zero_copy_only=False), _MISSING, _OK).astype(np.int8)
            uv2: list[Any] = [True, False]
            ui2 = np.where(ocol.is_null().to_numpy(zero_copy_only=False), -1, np.where(y, 0, 1))
        else:
            uv2, ui2 = _uniques(ocol)
            redo |= np.append(_check_exact(uv2), False)[ui2]
            rules2 = [_outcome_value(v) for v in uv2] + [(_MISSING, False)]
            ost = np.array([r[0] for r in rules2], dtype=np.int8)[ui2]
            y = np.array([r[1] for r in rules2], dtype=bool)[ui2]

        def oval(i: int, uv: list[Any] = uv2, ui: np.ndarray = ui2) -> Any:
            return None if ui[i] < 0 else uv[ui[i]]
        more = (status == _OK) & (ost != _OK)
        status[more] = 10 + ost[more]
        for s in (_MISSING, _BAD):
            field_of[10 + s] = f.outcome
            value_of[10 + s] = oval
    else:
        assert f.pred is not None and f.gold is not None
        codes: dict[str, int] = {}
        keyed = []
        for key in (f.pred, f.gold):
            uv3, ui3 = _uniques(_column(tb, key.path))
            redo |= np.append(_check_exact(uv3), False)[ui3]
            keyed.append((uv3, ui3))
        pv, pi = keyed[0]
        gv, gi = keyed[1]
        pcode = np.array([codes.setdefault(_answer_key(v), len(codes)) for v in pv] + [-1], dtype=np.int64)[pi]
        gcode = np.array([codes.setdefault(_answer_key(v), len(codes)) for v in gv] + [-2], dtype=np.int64)[gi]
        y = pcode == gcode
        pm = (status == _OK) & (pi < 0)
        status[pm] = 20
        gm = (status == _OK) & (gi < 0)
        status[gm] = 21
        field_of[20], field_of[21] = f.pred, f.gold
        value_of[20] = value_of[21] = lambda i: None

    # rows re-read line by line are taken out of this part
    keep_mask = ~redo
    lines_of: list[bytes] | None = None

    def raw_line(i: int) -> bytes:
        nonlocal lines_of
        if lines_of is None:
            lines_of = buf.split(b"\n")
        r = lines_of[i]
        return r[:-1] if r.endswith(b"\r") else r

    ex = _Examples()
    bad = np.flatnonzero((status != _OK) & keep_mask)
    if bad.size:
        for code in np.unique(status[bad]):
            rows = bad[status[bad] == code]
            reason = (
                _CONF_REASON[int(code)] if code < 10 else _OUT_REASON[int(code) - 10]
                if code < 20 else R_MISSING_OUTCOME
            )
            key = field_of[int(code)]
            for i in rows[:EXAMPLES_PER_REASON]:
                v = value_of[int(code)](int(i))
                if code < 10:
                    detail = _conf_detail(int(code), key.name, v)
                elif code < 20:
                    detail = _outcome_detail(int(code) - 10, key.name, v)
                else:
                    detail = _outcome_detail(_MISSING, key.name, None)
                ex.issues.append(LineIssue(
                    int(numbers[i]), key.name, reason, detail,
                    preview_of(raw_line(int(i)).decode("utf-8")), ctx.name,
                ))
            ex.counts[reason] += int(rows.size)
    good = (status == _OK) & keep_mask
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
    part = _Part(
        line=numbers[good], conf=x[good] + 0.0, pct=pct[good], correct=y[good], item_id=ids[good],
        group=None if groups is None else groups[good], text=None if texts is None else texts[good],
        issues=ex.issues, counts=ex.counts,
    )
    return part, np.flatnonzero(redo)


def _pieces(buf: bytes, numbers: np.ndarray, ctx: _Ctx, budget: list[int]) -> list[_Part]:
    """Read lines (all expected clean) with pyarrow; split around what it refuses."""
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
    s = start + 3 if data.startswith(_BOM, start) else start
    limit = ctx.options.max_line_chars
    if e - s <= limit:
        return None
    slow = _Slow(ctx)
    slow.bad(no, None, R_TOO_LONG, f"line is {e - s:,} bytes, over the {limit:,} limit",
             data[s:s + 400].decode("utf-8", "replace"))
    return slow.part()


def _chunks(data: bytes, size: int) -> list[tuple[int, int, int, int]]:
    """``(start, end, first_line, lines)`` of whole-line chunks of about ``size`` bytes."""
    out: list[tuple[int, int, int, int]] = []
    pos, line, total = 0, 1, len(data)
    while pos < total:
        end = min(pos + size, total)
        if end < total:
            cut = data.rfind(b"\n", pos, end)
            if cut < 0:  # one line longer than the chunk: it gets a chunk of its own
                cut = data.find(b"\n", end)
                end = total if cut < 0 else cut + 1
            else:
                end = cut + 1
        k = data.count(b"\n", pos, end)  # no copy and no temporary array
        n = k + (0 if data[end - 1:end] == b"\n" else 1)
        out.append((pos, end, line, n))
        line += n
        pos = end
    return out


# ------------------------------------------------------------------- driver
def _sample(data: bytes, name: str, max_line: int) -> _Sample:
    """Parse the first objects of the file (the per-line rules) to find the fields.

    A line over ``max_line`` bytes is skipped unread, as the per-line path reports it:
    the sample must not parse what the limit refuses."""
    objects: list[dict[str, Any]] = []
    problems: Counter[str] = Counter()
    first: str | None = None
    pos, no, nonblank = 0, 0, 0
    while pos < len(data) and nonblank < SAMPLE_LINES and len(objects) < SAMPLE_OBJECTS:
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        if end - pos > max_line + 4:  # a BOM and a CR are not counted
            pos, no, nonblank = end + 1, no + 1, nonblank + 1
            problems[R_TOO_LONG] += 1
            if first is None:
                first = f"line {no}: {end - pos:,} bytes, over the {max_line:,} limit"
            continue
        raw = data[pos:end].removeprefix(_BOM).rstrip(b"\r")
        pos, no = end + 1, no + 1
        if not raw.strip(b" \t\r"):
            continue
        nonblank += 1
        if len(raw) > max_line:
            problems[R_TOO_LONG] += 1
            first = first or f"line {no}: {len(raw):,} bytes, over the {max_line:,} limit"
            continue
        try:
            obj = json_loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            reason = R_UTF8
        except ValueError:  # invalid, or nested too deeply (JsonLimitError)
            reason = R_JSON
        else:
            if isinstance(obj, dict):
                objects.append(obj)
                continue
            reason = R_NOT_OBJECT
            if first is None and isinstance(obj, list):  # a JSON array, not JSON Lines
                first = (f"line {no}: a JSON array of {len(obj):,} item(s), not one object per line; "
                         "write each item on a line of its own (JSON Lines)")
        problems[reason] += 1
        if first is None:
            first = f"line {no}: {preview_of(raw.decode('utf-8', 'replace'))[:80]!r}"
    if nonblank == 0 and pos >= len(data):
        if data.strip(b" \t\r\n"):  # pragma: no cover - a non-blank line is always counted
            raise CalibError(f"{name}: no data lines")
        raise CalibError(f"{name}: the file is empty" + (" (only blank lines)" if data else ""))
    if not objects:
        reasons = ", ".join(f"{k} ({v:,})" for k, v in problems.most_common())
        raise CalibError(
            f"{name}: no JSON object in the first {nonblank:,} non-blank lines; commonest problem: "
            f"{reasons}; first: {first}. Expected one JSON object per line, e.g. "
            '{"id": "q1", "confidence": 90, "correct": true}'
        )
    return _Sample(objects)


def read(source: Source, options: LoadOptions, *, fast: bool = True) -> tuple[Judgments, LoadReport]:
    """Read a JSONL file of stated confidences (see the module docstring).

    Parameters
    ----------
    source:
        The file's name and (decompressed) bytes.
    options:
        Field names, scale, strictness and limits.
    fast:
        Use the pyarrow fast path where it provably gives the same result. ``False``
        reads every line in Python (the reference the tests compare against).

    Returns
    -------
    rows, report:
        Every usable line, and what happened to every other line.

    Raises
    ------
    CalibError
        Empty file, no usable line, no confidence or outcome field, too many lines,
        an undetectable scale, or (``options.strict``) the first bad line.
    """
    name = source.name
    data = source.data.removeprefix(_BOM)
    size = max(1, min(CHUNK_BYTES, options.max_line_chars))
    spans = _chunks(data, size)
    n_lines = sum(span[3] for span in spans)
    if n_lines > options.max_rows:
        raise CalibError(
            f"{name}: more than {options.max_rows:,} lines ({n_lines:,}); refused "
            "(raise CALIB_MAX_ROWS if this file is genuine, or aggregate it to a count table value,n,correct)"
        )
    sample = _sample(data, name, options.max_line_chars)
    fields, notes = _resolve(sample, options, name)
    ctx = _Ctx(
        name=name, options=options, fields=fields, last_line=n_lines,
        unterminated=bool(data) and not data.endswith(b"\n"),
        parse_options=_schema(fields, sample) if fast else None,
    )
    if ctx.parse_options is None:
        parts = [_slow(_split(data, n_lines), np.arange(1, n_lines + 1, dtype=np.int64), ctx)]
    else:
        workers = min(2, os.cpu_count() or 1, len(spans))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(lambda span: _chunk(data, span, ctx), spans))
        else:
            results = [_chunk(data, span, ctx) for span in spans]
        parts = [p for r in results for p in r]
    return _finish(parts, ctx, notes, n_lines, data)


def _finish(
    parts: list[_Part], ctx: _Ctx, notes: list[str], n_lines: int, data: bytes,
) -> tuple[Judgments, LoadReport]:
    name, options, f = ctx.name, ctx.options, ctx.fields
    line = np.concatenate([p.line for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    order = np.argsort(line, kind="stable") if line.size and np.any(np.diff(line) < 0) else None

    def cat(arrays: list[np.ndarray]) -> np.ndarray:
        a = np.concatenate(arrays) if arrays else np.zeros(0)
        return a if order is None else a[order]

    line = line if order is None else line[order]
    conf = cat([p.conf for p in parts]).astype(np.float64)
    pct = cat([p.pct for p in parts]).astype(bool)
    correct = cat([p.correct for p in parts]).astype(bool)
    item_id = cat([_cat_labels([p.item_id for p in parts])])
    group = None if f.group is None else cat([_cat_labels([p.group for p in parts if p.group is not None])])
    text = None if f.text is None else cat([p.text for p in parts if p.text is not None])
    counts: Counter[str] = Counter()
    issues: list[LineIssue] = []
    for p in parts:
        counts.update(p.counts)
        issues.extend(p.issues)
    blank = sum(p.blank for p in parts)

    # the scale, from the lines that passed every other check; each value by its written
    # form ("85%" is on 0-100 whatever the others are), bare numbers by the bulk rule
    try:
        reading = read_scale(conf, np.where(pct, FORM_PERCENT, FORM_NUMBER), given=options.rescale,
                             mixed=options.mixed_scales)
    except CalibError as exc:
        raise CalibError(f"{name}: {exc}") from None
    scale = reading.scale
    notes.extend(reading.notes)
    warnings = list(reading.warnings)
    notes.extend(f"warning: {w}" for w in warnings)
    inside = reading.bad == SCALE_OK
    for code, reason in ((SCALE_OUTSIDE, R_OUTSIDE), (SCALE_AMBIGUOUS, R_AMBIGUOUS)):
        out = np.flatnonzero(reading.bad == code)
        for i in out[:EXAMPLES_PER_REASON]:
            v = _num(float(conf[i])) + ("%" if pct[i] else "")
            issues.append(LineIssue(
                int(line[i]), f.confidence.name, reason,
                f"{f.confidence.name} {v} {reading.why(int(i), float(conf[i]))}", "", name,
            ))
        if out.size:
            counts[reason] += int(out.size)
    conf = reading.stated
    issues = _first_examples(issues)
    if not inside.all():
        issues = _with_previews(issues, data)
    if options.strict and issues:
        first = min(issues, key=lambda i: i.line)
        raise CalibError(first.message() + " (strict mode stops at the first bad line)")

    keep = inside
    kept = int(keep.sum())
    dropped = int(sum(counts.values()))
    if kept == 0:
        if not counts:
            raise CalibError(f"{name}: the file is empty (only blank lines)")
        reason, k = counts.most_common(1)[0]
        example = next(i for i in issues if i.reason == reason)
        raise CalibError(
            f"{name}: no usable line: all {dropped:,} non-blank lines were dropped; commonest reason: "
            f"{reason} ({k:,} lines), e.g. {example.message()}"
        )
    stated = conf[keep]
    y = correct[keep]
    if y.all() or not y.any():
        notes.append(
            f"one class only: every kept answer is {'right' if y.all() else 'wrong'}; measures that "
            "compare right and wrong answers (AUROC, resolution, slope) are undefined"
        )
    if stated.min() == stated.max():
        notes.append(f"single distinct confidence: every kept line states {_num(float(stated[0]))}")
    if group is not None:
        missing = int((group[keep] == MISSING_GROUP).sum())
        if missing:
            notes.append(f"{missing:,} kept lines have no {f.group.name!r} (group {MISSING_GROUP!r})")  # type: ignore[union-attr]
    notes.append(f"scale: {scale.how or scale.name}")
    rows = Judgments(
        stated=stated, prob=scale.to_prob(stated), correct=y, line=line[keep],
        item_id=_fixed_text(item_id[keep]), scale=scale,
        group=None if group is None else _fixed_text(group[keep]),
        text=None if text is None else np.asarray(text[keep], dtype=object),
    )
    report = LoadReport(
        source=name, format="stated", lines_read=n_lines, blank=blank, kept=kept, dropped=dropped,
        dropped_by_reason=dict(sorted(counts.items())), issues=tuple(issues),
        fields={
            "confidence": f.confidence.name,
            "outcome": None if f.outcome is None else f.outcome.name,
            "prediction": None if f.pred is None else f.pred.name,
            "gold": None if f.gold is None else f.gold.name,
            "group": None if f.group is None else f.group.name,
            "id": None if f.item_id is None else f.item_id.name,
            "text": None if f.text is None else f.text.name,
        },
        scale=scale.to_dict(), notes=tuple(notes), forms=dict(reading.forms), warnings=tuple(warnings),
    )
    return rows, report


def _first_examples(issues: list[LineIssue]) -> list[LineIssue]:
    """The first :data:`EXAMPLES_PER_REASON` issues of each reason, by line."""
    seen: Counter[str] = Counter()
    out = []
    for i in sorted(issues, key=lambda i: i.line):
        seen[i.reason] += 1
        if seen[i.reason] <= EXAMPLES_PER_REASON:
            out.append(i)
    return out


def _with_previews(issues: list[LineIssue], data: bytes) -> list[LineIssue]:
    """Fill in the previews of the scale issues (found after parsing, from numbers only)
    by re-reading just the chunks that hold those lines."""
    later = (R_OUTSIDE, R_AMBIGUOUS)
    want = sorted({i.line for i in issues if i.reason in later})
    text: dict[int, str] = {}
    spans = _chunks(data, CHUNK_BYTES)
    firsts = [s[2] for s in spans]
    for no in want:
        k = int(np.searchsorted(firsts, no, side="right")) - 1
        start, end, first, _ = spans[k]
        raw = data[start:end].split(b"\n")[no - first]
        raw = raw.removeprefix(_BOM).removesuffix(b"\r")
        text[no] = preview_of(raw.decode("utf-8", "replace"))
    return [replace(i, preview=text[i.line]) if i.reason in later else i for i in issues]


def _width(a: np.ndarray) -> int:
    if a.size == 0:
        return 1
    if a.dtype.kind == "U":
        return max(1, int(np.char.str_len(a).max()))
    return max(1, int(np.fromiter(map(len, a), np.int64, a.size).max()))


def _cat_labels(arrays: list[np.ndarray]) -> np.ndarray:
    """Concatenate id/group arrays without ever building a fixed-width array over
    :data:`MAX_FIXED_TEXT_BYTES` (one 10,000-character id must not cost 40 kB a row)."""
    if not arrays:
        return np.zeros(0, dtype="<U1")
    total = sum(a.size for a in arrays)
    # fixed-width parts count at their width (an upper bound), others at their longest
    width = max(a.itemsize // 4 if a.dtype.kind == "U" else _width(a) for a in arrays)
    if total * width * 4 > MAX_FIXED_TEXT_BYTES:
        return np.concatenate([a.astype(object) for a in arrays])
    return np.concatenate([a if a.dtype.kind == "U" else a.astype(f"<U{_width(a)}") for a in arrays])


def _fixed_text(a: np.ndarray) -> np.ndarray:
    """Ids/groups as fixed-width unicode just wide enough for the longest (compact, fast
    to compare), unless that would take more than :data:`MAX_FIXED_TEXT_BYTES`."""
    if a.size == 0:
        return np.zeros(0, dtype="<U1")
    width = _width(a)
    if a.size * width * 4 > MAX_FIXED_TEXT_BYTES:
        return np.asarray(a, dtype=object)
    return a if a.dtype == np.dtype(f"<U{width}") else a.astype(f"<U{width}")
