"""What every reader shares: its input, its options, its bad-line collector, its result.

A reader is a function ``read(source: Source, options: LoadOptions) -> Read``: it takes
one input's name and (decompressed) bytes, reads every usable row and reports every
other one, and returns the rows with their load report. :mod:`calib.loading` picks the
reader and turns its result into a :class:`~calib.dataset.Dataset`. Two readers have no
rows to return (:mod:`calib.readers` says what each returns): the count-table reader
returns the table, the glob reader (rows reduced in SQL) the dataset. The limits
(``MAX_*``) are the defaults of :class:`LoadOptions`; :mod:`calib.limits` reads the
dashboard's and the command line's from the environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from calib.errors import CalibError
from calib.loadreport import IssueLog, LineIssue, LoadReport, preview_of
from calib.rows import Judgments
from calib.scale import Scale

#: Default cap on the decompressed size of a .gz input (a gzip bomb is refused): the
#: dashboard's and the command line's (``CALIB_MAX_DECOMPRESSED_MB``). The inflated text is
#: held while it is parsed, at up to four times its size: 200 MB of text keeps one input
#: under 1 GB (``bench/bench_hostile_memory.py``); a 1M-row judgments file is 60-100 MB.
MAX_DECOMPRESSED_BYTES = 200 * 2**20
#: Default cap on the number of rows of one input (``CALIB_MAX_ROWS``). A row costs about
#: 130 bytes while it is read and reduced (``bench/bench_hostile_memory.py --extra``), so
#: 5 million rows stay under 1 GB even when a small ``.gz`` holds them; larger inputs raise
#: the variable, or reduce to a count table in the warehouse (see the README).
MAX_ROWS = 5_000_000
#: Default cap on the length of one line (bytes: the JSONL readers measure the raw line).
MAX_LINE_CHARS = 1_000_000
#: Default cap on the rows of a count table (one per group and stated value; a million
#: cells hold every distinct softmax probability of a million items).
MAX_CELLS = 1_000_000
#: Default cap on one JSON document parsed whole: an Inspect ``.eval`` member, one
#: sample of a ``.json`` log, a JSON count table (Inspect samples are 10-100 kB; one
#: holding images as base64 a few MB).
MAX_JSON_BYTES = 64 * 2**20
#: Default cap on the number of groups of one input (``CALIB_MAX_GROUPS``): each group gets
#: its own audit (about 10 ms without resamples, far more with them), so 100,000 one-row
#: groups held a heavy-job slot for more than 10 minutes (:func:`calib.limits.check_groups`).
MAX_GROUPS = 1_000
#: Default cap on the memory :func:`calib.readers.jsonl.parse_cost` estimates parsing one JSON document takes.
MAX_PARSE_BYTES = 512 * 2**20

#: The formats of the eval and tracing platforms' own files (:mod:`calib.readers.verdicts`),
#: each the load report's ``format`` of its reader.
PLATFORMS = ("deepeval", "promptfoo", "langfuse", "langsmith", "phoenix", "otel", "openai", "mlflow", "helm", "lighteval")

#: The note of a reader given ``traffic=True`` (:attr:`LoadOptions.traffic`): no outcome was read.
TRAFFIC_NOTE = "outcome: not read (traffic: outcomes come from the reviewers' labels)"


@dataclass(frozen=True)
class LoadOptions:
    """Options every reader understands (each ignores what does not apply to it).

    Attributes
    ----------
    confidence_key, outcome_key, group_key, id_key:
        Field names overriding auto-detection (dotted paths allowed: ``"meta.conf"``).
    cluster_key:
        Field whose value groups dependent rows (the same item judged several times);
        ``None``: inferred (Inspect epochs, repeated item ids) where the reader can.
    rescale:
        Stated scale overriding detection (``--rescale LO,HI``).
    mixed_scales:
        Read bare numbers in two ranges (0.85 next to 85) each by its range: up to 1 a
        probability, above 1 on the detected scale (``--mixed-scales``); without it such
        a file is refused with both counts (:func:`calib.scale.read_scale`).
    strict:
        Fail on the first bad line instead of reporting it and going on.
    normalisation:
        Option log-prob length normalisation: ``"none"``, ``"char"``, ``"byte"`` or
        ``"token"`` (lm-eval's ``acc_norm`` is ``"char"``).
    variant:
        For lm-eval samples: ``"acc"`` or ``"acc_norm"`` (sets normalisation).
    phrases:
        Confidence in words: the phrases in order, lowest first (``--phrases
        "low,medium,high"``, :func:`calib.verbal.parse_phrases`); ``None``: phrases of the
        built-in table are recognised in a file whose confidences are words.
    traffic:
        The user said the input is traffic (items a judge scored, outcomes not known yet:
        ``calib plan|estimate|certify``, ``calib.load(..., traffic=True)``): the outcome is not
        read, so a row without one is kept (its ``correct`` is ``False``, a placeholder nothing
        reads; outcomes come from labels, :mod:`calib.traffic.read`). Never set for an audit,
        where a missing outcome drops its row with the reason.
    max_rows, max_line_chars, max_decompressed_bytes, max_cells, max_json_bytes, max_parse_bytes, max_groups:
        Limits; inputs over them are refused with a clear message, before the cost they
        guard (see :mod:`calib.limits`).
    """

    confidence_key: str | None = None
    outcome_key: str | None = None
    group_key: str | None = None
    id_key: str | None = None
    cluster_key: str | None = None
    rescale: Scale | None = None
    mixed_scales: bool = False
    strict: bool = False
    normalisation: str = "none"
    variant: str = "acc"
    phrases: str | tuple[str, ...] | None = None
    traffic: bool = False
    max_rows: int = MAX_ROWS
    max_line_chars: int = MAX_LINE_CHARS
    max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES
    max_cells: int = MAX_CELLS
    max_json_bytes: int = MAX_JSON_BYTES
    max_parse_bytes: int = MAX_PARSE_BYTES
    max_groups: int = MAX_GROUPS
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    """One input's name and bytes (already decompressed when it was ``.gz``, as UTF-8 when
    it was UTF-16/32 or had bare CR line ends); ``notes`` says what was done to them, for
    the load report (:func:`calib.readers.source.read_source`)."""

    name: str
    data: bytes
    notes: tuple[str, ...] = ()


#: What every reader returns: the usable rows and what happened to every line.
Read = tuple[Judgments, LoadReport]


class BadLines:
    """Bad-line messages of a side file (labels, traffic, hand-off records), each
    ``"<name> line <n>: <why>"``, kept up to ``cap``; the rest counted in one last
    ``"<name>: N more bad lines"`` (:func:`more_bad_lines` reads N back)."""

    def __init__(self, name: str, cap: int) -> None:
        self.name, self.cap = name, cap
        self.kept: list[str] = []
        self.more = 0

    def add(self, line: int, why: str) -> None:
        if len(self.kept) < self.cap:
            self.kept.append(f"{self.name} line {line}: {why}")
        else:
            self.more += 1

    def messages(self) -> tuple[str, ...]:
        return (*self.kept, more_bad_lines_message(self.name, self.more)) if self.more else tuple(self.kept)


def more_bad_lines_message(name: str, more: int) -> str:
    """The tail of a capped list of bad-line messages: ``"<name>: N more bad lines"``."""
    return f"{name}: {more:,} more bad lines"


def more_bad_lines(message: str) -> int | None:
    """N of a :class:`BadLines` tail ``"<name>: N more bad lines"``; ``None`` for another message."""
    m = re.fullmatch(r".*: ([\d,]+) more bad lines", message, flags=re.S)
    return int(m.group(1).replace(",", "")) if m else None


class IssueCollector:
    """Collects bad lines for one source; in strict mode the first one raises."""

    def __init__(self, source: str, strict: bool) -> None:
        self.source = source
        self.strict = strict
        self.log = IssueLog()

    def bad(
        self, line: int, field: str | None, reason: str, detail: str, *,
        preview: str = "", sample_id: str | None = None,
    ) -> None:
        issue = LineIssue(
            line=line, field=field, reason=reason, detail=detail, preview=preview_of(preview),
            source=self.source, sample_id=sample_id,
        )
        if self.strict:
            raise CalibError(issue.message() + " (strict mode stops at the first bad line)")
        self.log.add(issue)

    @property
    def dropped(self) -> int:
        return self.log.total


def megabytes(nbytes: int) -> str:
    """``nbytes`` in MB (2**20 bytes) for a message: ``"8"``, ``"1.5"``, ``"0.00095"``."""
    mb = nbytes / 2**20
    if mb == round(mb):
        return f"{round(mb):,}"
    return f"{mb:,.1f}" if mb >= 10 else f"{mb:.2g}"
