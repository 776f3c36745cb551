"""Reader for promptfoo eval results: ``promptfoo eval -o results.json`` and ``promptfoo export eval``.

Layout (read from files written by promptfoo 0.121.20; both commands write the same
shape): ``{"evalId", "results": {"version": 3, "timestamp", "prompts", "results": [...],
"stats"}, "config", "metadata"}``. Each ``results.results[]`` entry is one test case run
on one prompt and provider: ``id``, ``testIdx``, ``promptIdx``, ``provider`` (``id``,
``label``), ``vars``, ``testCase`` (``description``, ``vars``), ``response.output``,
``success``, ``score``, ``error``, ``failureReason`` (2: the provider failed),
``namedScores`` and ``gradingResult`` (``pass``, ``score``, ``reason``,
``componentResults[]``: one per assertion, with ``pass``, ``score``, ``reason``,
``assertion.type`` / ``assertion.metric``, ``metadata.graderError``). A manual rating in
promptfoo's viewer adds a component of type ``human`` (what the viewer posts; the
fixture's ``export.json`` holds 30 such ratings).

Which is which (the rule is :mod:`calib.readers.verdicts`')
    Each component is a score named by its ``assertion.metric``, else its type
    (``llm-rubric``). Model-graded types (:data:`JUDGE_TYPES`: ``llm-rubric``,
    ``g-eval``, ``factuality``, ``model-graded-closedqa``...) are **judges**, read by
    their ``score``; ``human`` is the **human** rating, every other type (``equals``,
    ``contains``, ``javascript``...) **code**; both read by their ``pass``. So the
    confidence is the judge's score, and the outcome the manual rating where the file
    has one, else the reference check. A judge component with ``metadata.graderError``
    (the grading model's reply was unreadable: promptfoo then writes score 0) has no
    score, and its item is listed as having no confidence. The test case's overall
    ``success``/``score`` (a mix of all assertions) is never used.
Item id, group and cluster
    The id is ``vars.id`` when the test has one, else the test's ``description``, else
    ``test <testIdx>``. The group is the provider (its label, else its id), with the
    prompt's label when the eval has several prompts; one provider and prompt: no group.
    A test case run several times on the same prompt and provider (``--repeat``) is one
    cluster.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from calib.errors import CalibError
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import get_or, short_text
from calib.readers.verdicts import CODE, HUMAN, JUDGE, Item, Platform, Score, Unusable, finish, load_document

PLATFORM = Platform("promptfoo", "promptfoo eval results", group_how="provider",
                    cluster_how="promptfoo --repeat: the test case on one prompt and provider")
#: promptfoo's model-graded assertion types (``not-`` variants too): the judges.
JUDGE_TYPES = frozenset({
    "llm-rubric", "g-eval", "factuality", "model-graded-closedqa", "model-graded-factuality",
    "answer-relevance", "context-faithfulness", "context-recall", "context-relevance",
    "conversation-relevance", "agent-rubric", "search-rubric", "select-best", "classifier", "pi",
    "trajectory:goal-success",
})
#: Deepest ``componentResults`` nesting (an ``assert-set`` inside one) followed.
MAX_DEPTH = 4


def read(source: Source, options: LoadOptions) -> Read:
    """Read a promptfoo results or export JSON file into judgments."""
    doc = load_document(source, options, PLATFORM.described)
    summary = doc.get("results") if isinstance(doc, dict) else None
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        summary = doc  # the evaluate summary alone
    results = summary.get("results") if isinstance(summary, dict) else None
    if not isinstance(results, list):
        raise CalibError(f"{source.name}: not a promptfoo results file (expected results.results, a list)")
    prompts = summary.get("prompts") if isinstance(summary.get("prompts"), list) else []
    issues = IssueCollector(source.name, options.strict)
    several = len({_provider(r) for r in results if isinstance(r, dict)}) > 1 or len(prompts) > 1
    items = [it for pos, r in enumerate(results, start=1)
             if (it := _item(pos, r, issues, prompts if len(prompts) > 1 else [], several)) is not None]
    _clusters(items)
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    stats = summary.get("stats") if isinstance(summary.get("stats"), dict) else {}
    notes = [f"promptfoo eval {short_text(doc.get('evalId', '?'))[:60]} (results version "
             f"{short_text(summary.get('version', '?'))[:8]}, promptfoo {short_text(meta.get('promptfooVersion', '?'))[:20]}): "
             f"{len(results):,} result(s); promptfoo counts {stats.get('successes', '?')} passed, "
             f"{stats.get('failures', '?')} failed, {stats.get('errors', '?')} errors"]
    return finish(source, options, PLATFORM, items, issues, notes, len(results))


def _provider(r: dict[str, Any]) -> str:
    p = r.get("provider")
    if isinstance(p, dict):
        name = p.get("label") or p.get("id")
        return short_text(name) if isinstance(name, str) else ""
    return short_text(p) if isinstance(p, str) else ""


def _item(pos: int, r: Any, issues: IssueCollector, prompts: list[Any], several: bool) -> Item | None:
    """One result with its assertions as scores, or ``None`` (reported)."""
    if not isinstance(r, dict):
        issues.bad(pos, None, "malformed result", f"result {pos} is not a JSON object")
        return None
    rid = _id(r, pos)
    if r.get("failureReason") == 2 or (r.get("error") and not isinstance(r.get("gradingResult"), dict)):
        issues.bad(pos, "error", "result error", f"the provider failed: {short_text(r.get('error'))[:120]}",
                   sample_id=rid)
        return None
    grading = r.get("gradingResult")
    comps = grading.get("componentResults") if isinstance(grading, dict) else None
    if not isinstance(comps, list):
        issues.bad(pos, "gradingResult", "malformed result",
                   "gradingResult.componentResults is missing or not a list", sample_id=rid)
        return None
    scores: list[Score] = []
    if not _scores(comps, scores, 0):
        issues.bad(pos, "gradingResult", "malformed result", "a component result is not an object with an "
                   "assertion type", sample_id=rid)
        return None
    group = ""
    if several:
        group = _provider(r)
        idx = r.get("promptIdx")
        if prompts and isinstance(idx, int) and 0 <= idx < len(prompts) and isinstance(prompts[idx], dict):
            group += f" / {short_text(prompts[idx].get('label') or idx)[:60]}"
    cluster = f"{r.get('testIdx')}|{r.get('promptIdx')}|{_provider(r)}"
    return Item(pos=pos, id=rid, scores=scores, raw=r, group=group, cluster=cluster,
                text=short_text(get_or(r, "response.output")))


def _scores(comps: list[Any], out: list[Score], depth: int) -> bool:
    """Each component as a score (nested ``componentResults`` too); ``False`` when one is malformed."""
    for c in comps:
        if not isinstance(c, dict):
            return False
        kind_of = get_or(c, "assertion.type")
        if kind_of is None and isinstance(c.get("componentResults"), list) and depth < MAX_DEPTH:
            if not _scores(c["componentResults"], out, depth + 1):
                return False
            continue
        if not isinstance(kind_of, str):
            return False
        metric = get_or(c, "assertion.metric")
        name = metric if isinstance(metric, str) and metric else kind_of
        base = kind_of.removeprefix("not-")
        kind = HUMAN if base == "human" else JUDGE if base in JUDGE_TYPES else CODE
        if kind == JUDGE:
            value: Any = (Unusable(f"the grader failed: {short_text(c.get('reason'))[:120]}")
                          if get_or(c, "metadata.graderError") else c.get("score"))
        else:
            value = c.get("pass")
        out.append(Score(name, value, kind))
        if (depth < MAX_DEPTH and isinstance(c.get("componentResults"), list)
                and not _scores(c["componentResults"], out, depth + 1)):
            return False
    return True


def _id(r: dict[str, Any], pos: int) -> str:
    for path in ("vars.id", "testCase.vars.id", "testCase.description"):
        v = get_or(r, path)
        if isinstance(v, str | int) and not isinstance(v, bool) and str(v):
            return short_text(v)[:120]
    idx = r.get("testIdx")
    return f"test {idx}" if isinstance(idx, int) and not isinstance(idx, bool) else f"result {pos}"


def _clusters(items: list[Item]) -> None:
    """Keep a cluster only where the same test, prompt and provider repeat (``--repeat``)."""
    counts = Counter(it.cluster for it in items)
    for it in items:
        if counts[it.cluster] < 2:
            it.cluster = None
