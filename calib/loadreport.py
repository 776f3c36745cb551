"""The load report: what was read, what was kept, and every line that was not."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: How many examples of each drop reason a report keeps (counts stay exact).
EXAMPLES_PER_REASON = 20
#: Longest preview of an offending line kept in the report.
PREVIEW_CHARS = 160


@dataclass(frozen=True)
class LineIssue:
    """One input line (or sample) that could not be used.

    Attributes
    ----------
    line:
        1-based line number in the file (for formats without lines, the 1-based
        sample position); ``0`` for a whole-file problem.
    field:
        The field concerned (``"confidence"``), or ``None`` when the whole line is bad.
    reason:
        A short fixed category (``"invalid JSON"``, ``"outside the scale"``...), used
        to count drops by reason.
    detail:
        The specific message a person reads ("confidence 150 is outside the 0-100 scale").
    preview:
        The start of the offending line, as text (never rendered as HTML).
    source:
        File (or archive member) the line came from.
    sample_id:
        Sample id when the format has one (Inspect, lm-eval), else ``None``.
    unit:
        What ``line`` counts: ``"line"``, or ``"record"`` for the records of a JSON array
        read one at a time (:func:`calib.readers.jsonl.array_as_lines`).
    """

    line: int
    field: str | None
    reason: str
    detail: str
    preview: str = ""
    source: str = ""
    sample_id: str | None = None
    unit: str = "line"

    def message(self) -> str:
        """``file:line: field: detail`` — the form every face prints."""
        where = f"{self.source}:" if self.source else ""
        where += f"{self.unit} {self.line}" if self.line else "file"
        if self.sample_id is not None:
            where += f" (sample {self.sample_id})"
        fld = f" [{self.field}]" if self.field else ""
        return f"{where}{fld}: {self.detail}"

    def to_dict(self) -> dict[str, object]:
        return {
            "line": self.line,
            "field": self.field,
            "reason": self.reason,
            "detail": self.detail,
            "preview": self.preview,
            "source": self.source,
            "sample_id": self.sample_id,
        } | ({"unit": self.unit} if self.unit != "line" else {})


def preview_of(text: str) -> str:
    """The start of a line for display: control characters made visible, cut short."""
    t = text.replace("\r", "\\r").replace("\t", " ")
    return t if len(t) <= PREVIEW_CHARS else t[: PREVIEW_CHARS - 1] + "…"


@dataclass(frozen=True)
class LoadReport:
    """What a reader did with one input.

    ``lines_read`` counts every line (or sample) including blank ones; ``kept`` +
    ``dropped`` + ``blank`` equals ``lines_read``. ``dropped_by_reason`` counts
    every dropped line by its :attr:`LineIssue.reason`; ``issues`` holds the first
    :data:`EXAMPLES_PER_REASON` examples of each reason (``issues_total`` all).
    ``forms`` counts the written forms of the confidences that were read
    (``{"percent": 40, "0-100": 35, "probability": 25}``, see
    :func:`calib.scale.read_scale`); ``warnings`` says where an option contradicts the
    data (``--rescale 0,100`` on values 1 to 9): every face shows them as warnings, and
    they are also among the ``notes``.
    """

    source: str
    format: str
    lines_read: int = 0
    blank: int = 0
    kept: int = 0
    dropped: int = 0
    dropped_by_reason: dict[str, int] = field(default_factory=dict)
    issues: tuple[LineIssue, ...] = ()
    fields: dict[str, str | None] = field(default_factory=dict)
    scale: dict[str, object] | None = None
    notes: tuple[str, ...] = ()
    forms: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "format": self.format,
            "lines_read": self.lines_read,
            "blank": self.blank,
            "kept": self.kept,
            "dropped": self.dropped,
            "dropped_by_reason": dict(self.dropped_by_reason),
            "issues": [i.to_dict() for i in self.issues],
            "fields": dict(self.fields),
            "scale": self.scale,
            "notes": list(self.notes),
            "forms": dict(self.forms),
            "warnings": list(self.warnings),
        }

    def summary(self) -> str:
        """One line for people: ``read 1,002 lines: kept 1,000, dropped 2 (...)``."""
        s = f"read {self.lines_read:,} lines: kept {self.kept:,}"
        if self.dropped:
            reasons = ", ".join(f"{n:,} {r}" for r, n in sorted(self.dropped_by_reason.items()))
            s += f", dropped {self.dropped:,} ({reasons})"
        if self.blank:
            s += f", {self.blank:,} blank"
        return s


class IssueLog:
    """Collects :class:`LineIssue` s while a reader runs; counts all, keeps examples."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.kept: list[LineIssue] = []

    def add(self, issue: LineIssue) -> None:
        self.counts[issue.reason] += 1
        if self.counts[issue.reason] <= EXAMPLES_PER_REASON:
            self.kept.append(issue)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def issues(self) -> tuple[LineIssue, ...]:
        return tuple(sorted(self.kept, key=lambda i: (i.source, i.line)))


def merge_reports(reports: list[LoadReport], source: str, fmt: str) -> LoadReport:
    """One report for several inputs read together (a folder of lm-eval files)."""
    by_reason: Counter[str] = Counter()
    for r in reports:
        by_reason.update(r.dropped_by_reason)
    notes: list[str] = []
    for r in reports:
        notes.extend(r.notes)
    return LoadReport(
        source=source,
        format=fmt,
        lines_read=sum(r.lines_read for r in reports),
        blank=sum(r.blank for r in reports),
        kept=sum(r.kept for r in reports),
        dropped=sum(r.dropped for r in reports),
        dropped_by_reason=dict(by_reason),
        issues=tuple(i for r in reports for i in r.issues),
        fields=reports[0].fields if reports else {},
        scale=reports[0].scale if reports else None,
        notes=tuple(dict.fromkeys(notes)),
        forms=dict(sum((Counter(r.forms) for r in reports), Counter())),
        warnings=tuple(dict.fromkeys(w for r in reports for w in r.warnings)),
    )
