"""The shared base of the eval-platform readers: items carrying named scores, read as rows.

An eval or tracing platform (promptfoo, DeepEval, Langfuse...) stores, per item (a test
case, a trace, a run), several named scores, each from a kind of source: a **judge** (an
LLM grader: promptfoo's ``llm-rubric``, a DeepEval metric, a Langfuse ``EVAL`` score), a
**human** (an annotation, a manual rating) or **code** (a deterministic check against a
reference answer: ``equals``, exact match). A platform reader (:mod:`.promptfoo`,
:mod:`.deepeval`...) turns its file into :class:`Item` s, each with its :class:`Score`
list; :func:`finish` here picks the confidence and the outcome by one rule, the same for
every platform, and returns the rows and the load report.

The rule
    Confidence: the score named by ``options.confidence_key`` (a score name, or a dotted
    path in the item's record); else the **judge** score name found on most items. A
    judge that states a probability or a 0-1 / 1-10 rubric score is read on the scale
    :func:`calib.scale.read_scale` finds for the values, as every stated confidence is.
    Outcome: the score named by ``options.outcome_key`` (same lookup); else the
    **human** score name found on most items; else the **code** score name found on
    most items (a reference check, said in a note: it is not a human label). A file
    with a judge score and nothing to check it against is refused with the fix. This is
    the "verdict-only" reading: a pass/fail judge's score audited against the outcomes.
    Traffic (``options.traffic``: items a judge scored whose outcomes come from reviewers'
    labels later, :mod:`calib.traffic.read`): the confidence by the same rule, no outcome
    chosen or read (``correct`` is a ``False`` placeholder), so an item without a human
    or code score is kept.
Values
    A confidence is a number (a JSON number or numeric string); ``true``/``false`` (a
    verdict without a score) is not a confidence. An outcome is ``true``/``false``,
    ``1``/``0``, or one of :data:`RIGHT` / :data:`WRONG` (case-insensitive). Anything
    else is a bad item named by its id and the reason; every other item is kept.
Items without a usable confidence
    Counted by reason in the load report and listed by id in a note
    (``no confidence on 3 item(s): t1, t7, t9``).
Group and cluster
    ``options.group_key`` / ``options.cluster_key`` are dotted paths in the item's record;
    without them each platform gives its natural group (promptfoo's provider) and cluster
    (a trace, a session, a repeat of the same test), said in the report.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.readers.base import TRAFFIC_NOTE, IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import (
    BOM,
    as_number,
    check_json_size,
    cluster_how,
    get_path,
    is_missing,
    json_loads,
    not_utf8,
    short_text,
)
from calib.rows import Judgments
from calib.scale import AMBIGUOUS, FORM_NUMBER, read_scale
from calib.scale import OK as SCALE_OK

JUDGE, HUMAN, CODE, OTHER = "judge", "human", "code", "other"
#: Outcome words read as right / wrong (lower-cased).
RIGHT = frozenset({"true", "pass", "passed", "correct", "right", "yes", "y", "c", "1", "good", "accept",
                   "accepted", "thumbs_up", "👍"})
WRONG = frozenset({"false", "fail", "failed", "incorrect", "wrong", "no", "n", "i", "0", "bad", "reject",
                   "rejected", "thumbs_down", "👎"})
#: Ids listed in a note before "and N more".
IDS_SHOWN = 10


@dataclass(frozen=True)
class Unusable:
    """A score the platform says it could not give (an errored metric): ``why`` in words."""

    why: str


@dataclass(frozen=True)
class Score:
    """One named score of an item: its value (number, bool or text) and its source kind."""

    name: str
    value: Any
    kind: str = OTHER


@dataclass
class Item:
    """One judged item of a platform's file.

    ``pos`` is its 1-based position (the line of a JSONL file, else the record); ``raw``
    the record the overrides' dotted paths are looked up in; ``group`` / ``cluster`` the
    platform's natural ones (overridden by the options)."""

    pos: int
    id: str
    scores: list[Score] = field(default_factory=list)
    raw: Any = None
    group: str = ""
    cluster: str | None = None
    text: str = ""


@dataclass(frozen=True)
class Platform:
    """What :func:`finish` says about the platform: its format name (the load report's
    ``format``), the tool's words for the file, and where its group and cluster come from."""

    fmt: str
    described: str
    group_how: str = ""
    cluster_how: str = ""
    unit: str = "record"  # what an item's position counts: "record", or "line" of a JSON Lines file


def outcome_of(value: Any) -> bool | None:
    """``value`` as right/wrong, or ``None`` when it is not a binary outcome."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return True if value == 1 else False if value == 0 else None
    if isinstance(value, str):
        low = value.strip().lower()
        return True if low in RIGHT else False if low in WRONG else None
    return None


def confidence_of(value: Any) -> float | None:
    """``value`` as a confidence number, or ``None`` (a verdict, text, a list...)."""
    if isinstance(value, bool):
        return None
    return as_number(value)


def _lookup(item: Item, key: str) -> tuple[bool, Any]:
    """The value of score ``key`` on ``item`` (a dotted path in the record when no score
    has that name): ``(found, value)``; several different values of one name are a list."""
    vals = [s.value for s in item.scores if s.name == key]
    if vals:
        distinct = list({repr(v): v for v in vals}.values())
        if len(distinct) == 1:
            return True, distinct[0]
        shown = ", ".join(short_text(repr(v))[:30] for v in distinct[:4])
        return True, Unusable(f"{len(distinct)} different values on one item ({shown})")
    v = get_path(item.raw, key)
    return (False, None) if is_missing(v) else (True, v)


def _pick(items: list[Item], kinds: tuple[str, ...], exclude: str | None = None,
          ) -> tuple[str | None, str | None, Counter[str]]:
    """The commonest score name (other than ``exclude``) of the first kind present:
    ``(name, kind, names of that kind)``."""
    for kind in kinds:
        names: Counter[str] = Counter()
        for it in items:
            names.update({s.name for s in it.scores if s.kind == kind and s.name != exclude})
        if names:
            return names.most_common(1)[0][0], kind, names
    return None, None, Counter()


@dataclass
class _Choice:
    conf: str
    outcome: str | None  # None: traffic, no outcome read
    notes: list[str]


def _choose(items: list[Item], options: LoadOptions, name: str, plat: Platform) -> _Choice:
    """The confidence's and the outcome's score names by the rule of the module docstring."""
    notes: list[str] = []
    conf, _, judges = (options.confidence_key, JUDGE, Counter()) if options.confidence_key else _pick(items, (JUDGE,))
    if conf is None:
        seen = sorted({s.name for it in items for s in it.scores})
        raise CalibError(f"{name}: {plat.described}: no judge score to audit (scores seen: "
                         f"{', '.join(seen[:12]) or 'none'}); name one with --confidence-key")
    if len(judges) > 1:
        notes.append(f"judge scores: {', '.join(f'{k} ({v:,})' for k, v in judges.most_common())}; "
                     f"audited: {conf!r} (--confidence-key names another)")
    if options.traffic:  # no outcome is read: an item's outcome comes from its reviewers' label
        return _Choice(conf, None, [*notes, f"scores: the confidence is judge score {conf!r}", TRAFFIC_NOTE])
    if options.outcome_key:
        outcome, kind = options.outcome_key, "given"
    else:
        outcome, kind, _ = _pick(items, (HUMAN, CODE), exclude=conf)
    if outcome is None:
        raise CalibError(f"{name}: {plat.described}: the judge score {conf!r} has nothing to be checked against: "
                         "no human label and no reference check on any item. Add one (an annotation, a "
                         "manual rating, an exact-match check against the reference answer) or name the "
                         "outcome's field with --outcome-key")
    if outcome == conf:
        raise CalibError(f"{name}: the confidence and the outcome are both {conf!r}; name another with "
                         "--outcome-key")
    how = {"given": "named with --outcome-key", HUMAN: "a human label",
           CODE: "a code check against the reference (not a human label)"}[kind or "given"]
    notes.append(f"scores: the confidence is judge score {conf!r}; the outcome {outcome!r}, {how}")
    return _Choice(conf, outcome, notes)


def load_document(source: Source, options: LoadOptions, described: str) -> Any:
    """The whole file as one JSON document, its parse cost checked first (a refusal names
    the file and the cap)."""
    if not source.data.strip():
        raise CalibError(f"{source.name}: the file is empty")
    try:
        check_json_size(source.data, source.name, options, whole_file=True)
        return json_loads(source.data.lstrip(BOM))
    except UnicodeDecodeError as exc:
        raise CalibError(f"{source.name}: {described}: {not_utf8(exc)}") from None
    except ValueError as exc:  # JSONDecodeError, JsonLimitError
        raise CalibError(f"{source.name}: {described}: not readable JSON: {exc}") from None


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty list (a wrong type is the caller's to report)."""
    return value if isinstance(value, list) else []


def _ids(ids: list[str]) -> str:
    head = ", ".join(ids[:IDS_SHOWN])
    return head + (f" and {len(ids) - IDS_SHOWN:,} more" if len(ids) > IDS_SHOWN else "")


def _override(item: Item, key: str | None, default: Any) -> Any:
    if not key or key.lower() == "none":
        return None if key else default
    v = get_path(item.raw, key)
    return None if is_missing(v) or isinstance(v, dict | list) or v is None else str(v)


def finish(source: Source, options: LoadOptions, plat: Platform, items: list[Item], issues: IssueCollector,
           notes: list[str], n_records: int) -> Read:  # long: one pass over the items, then the scale
    """The items as rows and the load report (the module docstring's rule)."""
    if len(items) > options.max_rows:
        raise CalibError(f"{source.name}: more than {options.max_rows:,} items; refused")
    if not items:
        raise CalibError(f"{source.name}: {plat.described}: no item to read"
                         + (f"; first problem: {issues.log.issues()[0].message()}" if issues.dropped else ""))
    choice = _choose(items, options, source.name, plat)
    notes = notes + choice.notes
    kept: list[tuple[Item, float, bool, str, str | None]] = []
    no_conf: list[str] = []
    no_outcome: list[str] = []
    for it in items:
        has_c, cv = _lookup(it, choice.conf)
        has_o, ov = _lookup(it, choice.outcome) if choice.outcome is not None else (True, False)
        c = confidence_of(cv) if has_c else None
        if c is None or not math.isfinite(c):
            no_conf.append(it.id)
            why = ("no score " + repr(choice.conf) if not has_c else f"score {choice.conf!r}: {cv.why}"
                   if isinstance(cv, Unusable) else
                   f"score {choice.conf!r} is {short_text(repr(cv))[:60]}, not a number")
            issues.bad(it.pos, choice.conf, "no confidence", why, sample_id=it.id)
            continue
        ok = outcome_of(ov) if has_o else None
        if ok is None:
            why = (f"no outcome {choice.outcome!r}" if not has_o else f"outcome {choice.outcome!r}: {ov.why}"
                   if isinstance(ov, Unusable) else
                   f"outcome {choice.outcome!r} is {short_text(repr(ov))[:60]}, not right/wrong")
            issues.bad(it.pos, choice.outcome, "no outcome" if not has_o else "outcome not binary", why,
                       sample_id=it.id)
            no_outcome.append(it.id)
            continue
        group = _override(it, options.group_key, it.group) or ""
        cluster = _override(it, options.cluster_key, it.cluster)
        kept.append((it, c, ok, group, cluster))
    if no_conf:
        notes.append(f"no confidence on {len(no_conf):,} item(s): {_ids(no_conf)}")
    if no_outcome:
        others = sorted({s.name for it in items for s in it.scores if s.kind in (HUMAN, CODE)} - {choice.outcome})
        notes.append(f"no usable outcome {choice.outcome!r} on {len(no_outcome):,} item(s): {_ids(no_outcome)}"
                     + (f"; --outcome-key names another ({', '.join(others[:6])})" if others else ""))
    fields = {"confidence": choice.conf, "outcome": choice.outcome, "id": "id",
              "group": options.group_key or (plat.group_how if any(k[3] for k in kept) else None),
              "cluster": options.cluster_key or (plat.cluster_how if any(k[4] for k in kept) else None)}
    if not kept:
        raise CalibError(f"{source.name}: {plat.described}: no usable item; first problem: "
                         f"{issues.log.issues()[0].message()}")
    raw = np.asarray([k[1] for k in kept], dtype=np.float64)
    try:
        reading = read_scale(raw, np.full(raw.size, FORM_NUMBER, dtype=np.int8), given=options.rescale,
                             mixed=options.mixed_scales)
    except CalibError as exc:
        raise CalibError(f"{source.name}: {exc}") from None
    notes += list(reading.notes) + [f"warning: {w}" for w in reading.warnings]
    keep = reading.bad == SCALE_OK
    for i in np.flatnonzero(~keep):
        it = kept[i][0]
        issues.bad(it.pos, choice.conf, "ambiguous scale" if reading.bad[i] == AMBIGUOUS else "outside the scale",
                   f"confidence {raw[i]:.12g} {reading.why(int(i), float(raw[i]))}", sample_id=it.id)
    if not keep.any():
        raise CalibError(f"{source.name}: no usable item; first problem: {issues.log.issues()[0].message()}")
    rows = _rows(kept, reading.stated, keep, reading.scale, plat, options)
    if rows.group is not None:
        notes.append(f"group: {fields['group']}")
    report = LoadReport(
        source=source.name, format=plat.fmt, lines_read=n_records, kept=len(rows), dropped=issues.dropped,
        dropped_by_reason=dict(issues.log.counts),
        issues=tuple(dataclasses.replace(i, unit=plat.unit) for i in issues.log.issues()), fields=fields,
        scale=reading.scale.to_dict(), notes=tuple(notes), forms=dict(reading.forms), warnings=reading.warnings,
    )
    return rows, report


def _rows(kept: list[tuple[Item, float, bool, str, str | None]], stated: np.ndarray, keep: np.ndarray,
          scale: Any, plat: Platform, options: LoadOptions) -> Judgments:
    sel = np.flatnonzero(keep)
    groups = [k[3] for k in kept]
    clusters = [k[4] for k in kept]
    has_cluster = any(c is not None for c in clusters)
    return Judgments(
        stated=stated[sel],
        prob=scale.to_prob(stated[sel]),
        correct=np.asarray([k[2] for k in kept], dtype=bool)[sel],
        line=np.asarray([k[0].pos for k in kept], dtype=np.int64)[sel],
        item_id=np.asarray([k[0].id for k in kept], dtype=str)[sel],
        scale=scale,
        group=np.asarray(groups, dtype=str)[sel] if any(groups) else None,
        text=np.asarray([short_text(k[0].text) for k in kept], dtype=str)[sel],
        # an item without a cluster is its own (named by its position: ids repeat across groups)
        cluster=np.asarray([c if c is not None else f"{plat.unit} {k[0].pos}" for c, k in zip(clusters, kept, strict=True)],
                           dtype=object)[sel] if has_cluster else None,
        cluster_how=(cluster_how(options.cluster_key) if options.cluster_key else plat.cluster_how)
        if has_cluster else "",
    )
