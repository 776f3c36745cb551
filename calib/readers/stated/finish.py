"""From the pieces read to rows and a report: the scale, the bad-line examples, the notes."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from calib.errors import CalibError
from calib.loadreport import EXAMPLES_PER_REASON, LineIssue, LoadReport, preview_of
from calib.readers.base import Read
from calib.readers.jsonl import BOM, cluster_how
from calib.readers.stated.chunks import CHUNK_BYTES, _chunks
from calib.readers.stated.fields import _Fields
from calib.readers.stated.rules import MISSING_GROUP, R_AMBIGUOUS, R_OUTSIDE, _num
from calib.readers.stated.slow import _Ctx, _Part
from calib.rows import Judgments
from calib.scale import AMBIGUOUS as SCALE_AMBIGUOUS
from calib.scale import FORM_NUMBER, FORM_PERCENT, Scale, ScaleReading, read_scale
from calib.scale import OK as SCALE_OK
from calib.scale import OUTSIDE as SCALE_OUTSIDE
from calib.verbal import phrase_reading

#: Largest id/group array kept as fixed-width unicode (bytes); larger ones are objects.
MAX_FIXED_TEXT_BYTES = 256 * 1024**2


def _finish(
    parts: list[_Part], ctx: _Ctx, notes: list[str], n_lines: int, data: bytes,
) -> Read:
    """The pieces read (in any order) as rows in line order and the report; the scale is
    read here, from the lines that passed every other check."""
    name, options, f = ctx.name, ctx.options, ctx.fields
    every = _gather(parts, f is not None and f.group is not None, f.text is not None, f.cluster is not None)
    # the scale, from the lines that passed every other check; each value by its written
    # form ("85%" is on 0-100 whatever the others are), bare numbers by the bulk rule
    try:
        reading = (phrase_reading(every.conf, f.phrases) if f.phrases is not None else
                   read_scale(every.conf, np.where(every.pct, FORM_PERCENT, FORM_NUMBER), given=options.rescale,
                              mixed=options.mixed_scales))
    except CalibError as exc:
        raise CalibError(f"{name}: {exc}") from None
    notes.extend(reading.notes)
    warnings = list(reading.warnings)
    notes.extend(f"warning: {w}" for w in warnings)
    _scale_issues(every, reading, ctx)
    issues = _first_examples(every.issues)
    keep = reading.bad == SCALE_OK
    if not keep.all():
        issues = _with_previews(issues, data)
    if options.strict and issues:
        first = min(issues, key=lambda i: i.line)
        raise CalibError(first.message() + " (strict mode stops at the first bad line)")
    _refuse_empty(name, int(keep.sum()), every.counts, issues)
    rows = _rows(every, reading.stated, keep, reading.scale,
                 "" if f.cluster is None else cluster_how(f.cluster.name))
    notes.extend(_kept_notes(rows, f))
    report = LoadReport(
        source=name, format="stated", lines_read=n_lines, blank=every.blank, kept=len(rows),
        dropped=int(sum(every.counts.values())), dropped_by_reason=dict(sorted(every.counts.items())),
        issues=tuple(issues), fields=_field_names(f), scale=reading.scale.to_dict(), notes=tuple(notes),
        forms=dict(reading.forms), warnings=tuple(warnings),
    )
    return rows, report


def _gather(parts: list[_Part], has_group: bool, has_text: bool, has_cluster: bool = False) -> _Part:
    """The pieces as one, rows in line order (the threads and the re-read lines mix them)."""
    line = np.concatenate([p.line for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    order = np.argsort(line, kind="stable") if line.size and np.any(np.diff(line) < 0) else None

    def cat(arrays: list[np.ndarray]) -> np.ndarray:
        a = np.concatenate(arrays) if arrays else np.zeros(0)
        return a if order is None else a[order]

    counts: Counter[str] = Counter()
    issues: list[LineIssue] = []
    for p in parts:
        counts.update(p.counts)
        issues.extend(p.issues)
    return _Part(
        line=line if order is None else line[order],
        conf=cat([p.conf for p in parts]).astype(np.float64),
        pct=cat([p.pct for p in parts]).astype(bool),
        correct=cat([p.correct for p in parts]).astype(bool),
        item_id=cat([_cat_labels([p.item_id for p in parts])]),
        group=cat([_cat_labels([p.group for p in parts if p.group is not None])]) if has_group else None,
        text=cat([p.text for p in parts if p.text is not None]) if has_text else None,
        cluster=cat([p.cluster for p in parts if p.cluster is not None]).astype(object) if has_cluster else None,
        issues=issues, counts=counts, blank=sum(p.blank for p in parts),
    )


def _scale_issues(every: _Part, reading: ScaleReading, ctx: _Ctx) -> None:
    """Add the lines outside the scale or of an ambiguous scale to ``every``'s issues
    (examples without previews: :func:`_with_previews` fills them in)."""
    key = ctx.fields.confidence.name
    for code, reason in ((SCALE_OUTSIDE, R_OUTSIDE), (SCALE_AMBIGUOUS, R_AMBIGUOUS)):
        out = np.flatnonzero(reading.bad == code)
        for i in out[:EXAMPLES_PER_REASON]:
            v = _num(float(every.conf[i])) + ("%" if every.pct[i] else "")
            every.issues.append(LineIssue(
                int(every.line[i]), key, reason,
                f"{key} {v} {reading.why(int(i), float(every.conf[i]))}", "", ctx.name,
            ))
        if out.size:
            every.counts[reason] += int(out.size)


def _refuse_empty(name: str, kept: int, counts: Counter[str], issues: list[LineIssue]) -> None:
    """Refuse a file of which no line is usable, naming the commonest reason with an example."""
    if kept:
        return
    if not counts:
        raise CalibError(f"{name}: the file is empty (only blank lines)")
    reason, k = counts.most_common(1)[0]
    example = next(i for i in issues if i.reason == reason)
    raise CalibError(
        f"{name}: no usable line: all {int(sum(counts.values())):,} non-blank lines were dropped; commonest "
        f"reason: {reason} ({k:,} lines), e.g. {example.message()}"
    )


def _rows(every: _Part, stated: np.ndarray, keep: np.ndarray, scale: Scale, how: str = "") -> Judgments:
    """The kept rows, ``stated`` on the scale's form, ids and groups as compact text, and
    their ``--cluster-key`` values when read (found so: ``how``)."""
    # every line kept (the common case): the arrays as they are, not a copy of each
    sel: np.ndarray | slice = slice(None) if keep.all() else keep
    kept = stated[sel]
    return Judgments(
        stated=kept, prob=scale.to_prob(kept), correct=every.correct[sel], line=every.line[sel],
        item_id=_fixed_text(every.item_id[sel]), scale=scale,
        group=None if every.group is None else _fixed_text(every.group[sel]),
        text=None if every.text is None else np.asarray(every.text[sel], dtype=object),
        cluster=None if every.cluster is None else every.cluster[sel], cluster_how=how if every.cluster is not None else "",
    )


def _kept_notes(rows: Judgments, f: _Fields) -> list[str]:
    """What the report says of the kept rows: one class, one value, lines without a group, the scale."""
    notes: list[str] = []
    y = rows.correct
    if (f.outcome is not None or f.pred is not None) and (y.all() or not y.any()):
        notes.append(
            f"one class only: every kept answer is {'right' if y.all() else 'wrong'}; measures that "
            "compare right and wrong answers (AUROC, resolution, slope) are undefined"
        )
    if rows.stated.min() == rows.stated.max():
        notes.append(f"single distinct confidence: every kept line states {_num(float(rows.stated[0]))}")
    if rows.group is not None and f.group is not None:
        missing = int((rows.group == MISSING_GROUP).sum())
        if missing:
            notes.append(f"{missing:,} kept lines have no {f.group.name!r} (group {MISSING_GROUP!r})")
    notes.append(f"scale: {rows.scale.how or rows.scale.name}")
    return notes


def _field_names(f: _Fields) -> dict[str, str | None]:
    """The report's ``fields``: which key each role was read from."""
    roles = (("confidence", f.confidence), ("outcome", f.outcome), ("prediction", f.pred), ("gold", f.gold),
             ("group", f.group), ("id", f.item_id), ("text", f.text))
    return {role: None if key is None else key.name for role, key in roles}


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
        raw = raw.removeprefix(BOM).removesuffix(b"\r")
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
