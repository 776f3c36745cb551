"""Which keys hold the confidence, the outcome, the id...: sampled from the first objects."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from calib.errors import CalibError
from calib.loadreport import preview_of
from calib.readers.base import LoadOptions
from calib.readers.jsonl import BOM, R_JSON, R_NOT_OBJECT, R_TOO_LONG, R_UTF8, json_loads
from calib.readers.stated.rules import (
    _NOT_FINITE,
    _OK,
    CONFIDENCE_KEYS,
    GOLD_KEYS,
    ID_KEYS,
    OUTCOME_KEYS,
    PREDICTION_KEYS,
    TEXT_KEYS,
    _conf_value,
    _outcome_value,
)
from calib.verbal import BUILT_IN, PhraseBook, parse_phrases

#: Objects sampled from the start of the file to find the fields.
SAMPLE_OBJECTS = 1000
#: Lines scanned at most while sampling, once an object has been found (before that the
#: scan goes on to the end of the file: 1M bad lines before 200 good ones were refused).
SAMPLE_LINES = 20_000


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
    #: Set when the confidences are phrases (:mod:`calib.verbal`): the phrases accepted.
    phrases: PhraseBook | None = None
    #: ``--cluster-key``'s field when the reader reads it (:func:`calib.readers.jsonl.cluster_key`).
    cluster: _Key | None = None

    def used(self) -> list[tuple[str, _Key]]:
        roles = ("confidence", "outcome", "pred", "gold", "group", "item_id", "text", "cluster")
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


def _looks_verbal(values: list[Any], book: PhraseBook) -> bool:
    """Are the sampled confidences phrases: more phrases of ``book`` than numbers among them?"""
    words = sum(1 for v in values if book.code(v) is not None)
    return words > 0 and words > sum(1 for v in values if _is_conf(v))


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

    book = BUILT_IN if options.phrases is None else parse_phrases(options.phrases)
    conf = given(options.confidence_key) or auto(
        sample.find(CONFIDENCE_KEYS, lambda v: _is_conf(v) or book.code(v) is not None, set()))
    if conf is None:
        raise CalibError(
            f"{name}: no confidence field found in the first {len(sample.objects):,} objects "
            f"(looked for {', '.join(CONFIDENCE_KEYS)} holding numbers); keys seen: {seen}. "
            "Name it with --confidence-key (or --prob-key)"
        )
    outcome = None if options.traffic else given(options.outcome_key)
    pred = gold = None
    if outcome is None and not options.traffic:
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
    words = options.phrases is not None or _looks_verbal(sample.values.get(conf.path, []), book)
    fields = _Fields(conf, outcome, pred, gold, group, item_id, text, book if words else None)
    notes.append(f"confidence: {conf.name!r} ({conf.how})" + (", read as phrases" if words else ""))
    if options.traffic:
        notes.append("outcome: not read (traffic: outcomes come from the reviewers' labels)")
    elif outcome is not None:
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


def _sample(data: bytes, name: str, max_line: int) -> _Sample:
    """Parse the first objects of the file (the per-line rules) to find the fields: up to
    :data:`SAMPLE_OBJECTS` objects in the first :data:`SAMPLE_LINES` non-blank lines, or
    further until the first object (one pass, each line parsed once).

    A line over ``max_line`` bytes is skipped unread, as the per-line path reports it:
    the sample must not parse what the limit refuses."""
    objects: list[dict[str, Any]] = []
    problems: Counter[str] = Counter()
    first: str | None = None
    pos, no, nonblank = 0, 0, 0
    skipped = 0
    while pos < len(data) and (nonblank < SAMPLE_LINES or not objects) and len(objects) < SAMPLE_OBJECTS:
        if nonblank >= SAMPLE_LINES:  # no object yet: only a line holding a "{" can hold one
            brace = data.find(b"{", pos)
            start = len(data) if brace < 0 else max(pos, data.rfind(b"\n", pos, brace) + 1)
            jumped = data.count(b"\n", pos, start) + (brace < 0 and not data.endswith(b"\n"))
            skipped, no, pos = skipped + jumped, no + jumped, start
            if pos >= len(data):
                break
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        if end - pos > max_line + 4:  # a BOM and a CR are not counted
            pos, no, nonblank = end + 1, no + 1, nonblank + 1
            problems[R_TOO_LONG] += 1
            if first is None:
                first = f"line {no}: {end - pos:,} bytes, over the {max_line:,} limit"
            continue
        raw = data[pos:end].removeprefix(BOM).rstrip(b"\r")
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
            f"{name}: no JSON object in its {nonblank + skipped:,} lines; commonest problem"
            + (f" in the first {nonblank:,}: " if skipped else ": ") +
            f"{reasons}; first: {first}. Expected one JSON object per line, e.g. "
            '{"id": "q1", "confidence": 90, "correct": true}'
        )
    return _Sample(objects)
