"""Reader for LangSmith feedback, with or without its runs.

Layout (checked against the langsmith 0.x Python SDK's ``schemas.Feedback`` and
``schemas.Run``, which the fixture is serialised with; LangSmith does not run offline):
what ``Client.list_feedback()`` and ``Client.list_runs()`` return, dumped as
``{"runs": [...], "feedback": [...]}``, or the feedback alone as a JSON array, an object
with a ``feedback`` list, or JSON Lines. A feedback record has ``id``, ``run_id``,
``trace_id``, ``key``, ``score`` (a number or boolean), ``value`` (a number, boolean, text
or object), ``comment``, ``correction`` and ``feedback_source`` (``type``: ``model`` for
an evaluator, ``app`` for a person in the LangSmith app or an annotation queue, ``api``
for code). A run has ``id``, ``name``, ``trace_id``, ``session_id`` (its project or
experiment), ``inputs``, ``outputs``.

Which is which (the rule is :mod:`calib.readers.verdicts`')
    The feedback on one run is one item, joined by ``run_id``, each record a score named
    by its ``key``. Source type ``model`` is a **judge**, ``app`` **human**; ``api`` is
    read only when ``--confidence-key`` / ``--outcome-key`` names its key (code posts
    evaluator results and user feedback alike). A record is read by its ``score``, else
    its ``value``. A feedback whose ``correction`` is set (a person corrected the output)
    keeps its score; the correction is not an outcome.
Group and cluster
    With the runs: the group is the run's project (``session_id``) when there are several;
    the runs of one trace (feedback on child runs) are one cluster. Without them: no
    group; the cluster is the feedback's ``trace_id`` when a trace holds several runs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from calib.errors import CalibError
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import JsonLines, get_or, json_loads, short_text
from calib.readers.verdicts import HUMAN, JUDGE, OTHER, Item, Platform, Score, Unusable, finish, load_document

PLATFORM = Platform("langsmith", "LangSmith feedback", group_how="the run's project (session_id)",
                    cluster_how="LangSmith trace (its runs with feedback)")
KINDS = {"model": JUDGE, "app": HUMAN}


def read(source: Source, options: LoadOptions) -> Read:
    """Read LangSmith feedback (and runs) into judgments."""
    issues = IssueCollector(source.name, options.strict)
    runs: list[Any] = []
    if _is_jsonl(source.data, options):  # JSON Lines of feedback
        records: list[tuple[int, Any]] = list(JsonLines(source, options, issues))
        plat = Platform(PLATFORM.fmt, PLATFORM.described, PLATFORM.group_how, PLATFORM.cluster_how, unit="line")
    else:
        doc = load_document(source, options, PLATFORM.described)
        feedback = doc.get("feedback") if isinstance(doc, dict) else doc
        runs = doc.get("runs") if isinstance(doc, dict) and isinstance(doc.get("runs"), list) else []
        if not isinstance(feedback, list):
            raise CalibError(f"{source.name}: not LangSmith feedback (expected a list of feedback, or an object "
                             "whose feedback is one)")
        records = list(enumerate(feedback, start=1))
        plat = PLATFORM
    by_run = {str(r["id"]): r for r in runs if isinstance(r, dict) and isinstance(r.get("id"), str)}
    items, n_fb = _items(records, issues, by_run)
    _groups_and_clusters(items, by_run)
    n = len(items) + issues.dropped
    kinds = Counter(s.kind for it in items for s in it.scores)
    notes = [f"LangSmith feedback: {n_fb:,} record(s) on {len(items):,} run(s)"
             + (f", {len(by_run):,} run(s) given" if runs else " (no runs given)")
             + f"; {kinds.get(JUDGE, 0):,} from model, {kinds.get(HUMAN, 0):,} from app, "
             f"{kinds.get(OTHER, 0):,} from api"]
    return finish(source, options, plat, items, issues, notes, n)


def _is_jsonl(data: bytes, options: LoadOptions) -> bool:
    """Whether the first line alone is one feedback record (a run id at its top level)."""
    first = data.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    if not first.startswith(b"{") or len(first) > options.max_line_chars or b'"run_id"' not in first:
        return False
    try:
        obj = json_loads(first)
    except ValueError:
        return True  # a bad first line of JSON Lines: reported as such
    return isinstance(obj, dict) and "run_id" in obj


def _value(rec: dict[str, Any]) -> Any:
    """The feedback's score, else its value; neither: unusable, with its comment."""
    score = rec.get("score")
    if score is not None:
        return score
    if rec.get("value") is not None:
        return rec["value"]
    comment = rec.get("comment")
    return Unusable("the feedback has no score or value" + (f" ({short_text(comment)[:100]})" if comment else ""))


def _items(records: list[tuple[int, Any]], issues: IssueCollector,
           by_run: dict[str, Any]) -> tuple[list[Item], int]:
    """The runs with their feedback as scores, and the number of feedback records read."""
    items: dict[str, Item] = {}
    n = 0
    for pos, rec in records:
        if not isinstance(rec, dict):
            issues.bad(pos, None, "malformed feedback", f"feedback {pos} is not a JSON object")
            continue
        fid = rec.get("id") if isinstance(rec.get("id"), str) else None
        run_id, key = rec.get("run_id"), rec.get("key")
        if not isinstance(key, str) or not key:
            issues.bad(pos, "key", "malformed feedback", "the feedback has no key", sample_id=fid)
            continue
        if not isinstance(run_id, str) or not run_id:
            issues.bad(pos, "run_id", "malformed feedback", "the feedback names no run (run_id)", sample_id=fid)
            continue
        src = get_or(rec, "feedback_source.type")
        kind = KINDS.get(src.lower(), OTHER) if isinstance(src, str) else OTHER
        it = items.get(run_id)
        if it is None:
            run = by_run.get(run_id)
            trace = rec.get("trace_id") or (run or {}).get("trace_id")
            it = items[run_id] = Item(pos=pos, id=short_text(run_id)[:120], raw=run if run is not None else rec,
                                      cluster=trace if isinstance(trace, str) else None,
                                      text=short_text(get_or(run, "inputs")) if run else "")
        it.scores.append(Score(key, _value(rec), kind))
        n += 1
    return list(items.values()), n


def _groups_and_clusters(items: list[Item], by_run: dict[str, Any]) -> None:
    """The project as the group when there are several; a trace as a cluster when it holds several items."""
    projects = {it.id: str(by_run[it.id].get("session_id") or "") for it in items if it.id in by_run}
    if len(set(projects.values())) > 1:
        for it in items:
            it.group = projects.get(it.id, "")
    counts = Counter(it.cluster for it in items if it.cluster is not None)
    for it in items:
        if it.cluster is not None and counts[it.cluster] < 2:
            it.cluster = None
