"""Reader for OpenAI outputs: Evals API output items, and Batch / chat completions with logprobs.

Layout (checked against the openai 2.x Python SDK's models, which the fixtures are
serialised with; the API does not run offline):

- **Evals output items** (``GET /v1/evals/{id}/runs/{run}/output_items``): ``{"object":
  "list", "data": [...]}`` or JSON Lines of ``eval.run.output_item`` objects, each with
  ``id``, ``datasource_item_id``, ``datasource_item``, ``status`` and ``results[]`` (one
  per grader: ``name``, ``type``, ``score``, ``passed``). A model grader
  (``score_model``, ``label_model``: :data:`JUDGE_GRADERS`) is a **judge**, read by its
  ``score``; every other grader (``string_check``, ``text_similarity``, ``python``...) is
  **code**, read by ``passed`` (:mod:`calib.readers.verdicts` holds the rule). The item id
  is ``datasource_item.id`` when there is one, else ``datasource_item_id``.
- **Batch output** (one line per request: ``{"custom_id", "response": {"status_code",
  "body": <chat.completion>}, "error"}``) or chat completions, one per line, requested
  with ``logprobs: true, top_logprobs: N`` on a multiple-choice question: the
  option-probability path. The answer is the first token of ``choices[0].logprobs.content``
  that spells an option letter (``"B"``, ``" B"``, ``"(B"``) with another letter among its
  top log-probs (a choice between options, not an "I" in the prose; else the first token
  spelling a letter); the option scores are the
  log-probabilities of the letters among that token's ``top_logprobs`` (tokens spelling
  the same letter combined), and :func:`calib.options.to_judgments` takes it from there
  (prediction = argmax, confidence = its softmax probability over the letters). A letter
  outside the top log-probs gets none of the mass (counted in a note). The batch output
  does not carry the answer key: each line needs the gold letter, joined by ``custom_id``
  before reading (``gold``, ``answer``, ``target``, ``label`` at the top of the line, or
  the path ``--outcome-key`` names). A failed request, a line without an answer letter
  or without a gold letter is a bad line named by its ``custom_id``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.options import TOP_LABEL_SCALE, pad_rows, to_judgments
from calib.readers.base import TRAFFIC_NOTE, IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import JsonLines, get_or, is_missing, short_text
from calib.readers.verdicts import CODE, JUDGE, Item, Platform, Score, finish, load_document
from calib.rows import OptionScores

PLATFORM = Platform("openai", "OpenAI Evals output items", unit="record")
JUDGE_GRADERS = ("score_model", "label_model", "score-model", "label-model")
GOLD_KEYS = ("gold", "answer", "target", "label", "correct_answer")
#: A token that spells an option letter: the letter with optional space and brackets.
LETTER = re.compile(r"^\s*[(\[]?\s*([A-Z])\s*[)\].:]?\s*$")


def read(source: Source, options: LoadOptions) -> Read:
    """Read OpenAI Evals output items or Batch/chat outputs with logprobs."""
    head = source.data[:65536]
    if b'"eval.run.output_item"' in head:
        return _read_evals(source, options)
    return _read_logprobs(source, options)


# ------------------------------------------------------------------ Evals output items
def _read_evals(source: Source, options: LoadOptions) -> Read:
    issues = IssueCollector(source.name, options.strict)
    text = source.data.strip(b"\xef\xbb\xbf \t\r\n")
    if b"\n" in text and text.split(b"\n", 1)[0].rstrip().endswith(b"}") and b'"data"' not in text[:40]:
        records: list[tuple[int, Any]] = list(JsonLines(source, options, issues))
        plat = Platform(PLATFORM.fmt, PLATFORM.described, unit="line")
    else:
        doc = load_document(source, options, PLATFORM.described)
        data = doc.get("data") if isinstance(doc, dict) else doc
        if not isinstance(data, list):
            raise CalibError(f"{source.name}: not OpenAI eval output items (expected a list, or an object whose "
                             "data is one)")
        records = list(enumerate(data, start=1))
        plat = PLATFORM
    items = [it for pos, rec in records if (it := _eval_item(pos, rec, issues)) is not None]
    graders = Counter(s.name for it in items for s in it.scores)
    notes = [f"OpenAI eval output items: {len(records):,} item(s); graders "
             + ", ".join(f"{k} ({v:,})" for k, v in graders.most_common(6))]
    return finish(source, options, plat, items, issues, notes, len(records))


def _eval_item(pos: int, rec: Any, issues: IssueCollector) -> Item | None:
    if not isinstance(rec, dict):
        issues.bad(pos, None, "malformed output item", f"output item {pos} is not a JSON object")
        return None
    ds_id = get_or(rec, "datasource_item.id")
    if not isinstance(ds_id, str | int) or isinstance(ds_id, bool):
        ds_id = rec.get("datasource_item_id")
    iid = short_text(ds_id)[:120] if isinstance(ds_id, str | int) and not isinstance(ds_id, bool) else f"item {pos}"
    results = rec.get("results")
    if not isinstance(results, list):
        issues.bad(pos, "results", "malformed output item", "results is missing or not a list", sample_id=iid)
        return None
    if rec.get("status") not in (None, "pass", "fail", "passed", "failed", "completed") and not results:
        issues.bad(pos, "status", "output item error", f"status {short_text(rec.get('status'))[:40]!r}",
                   sample_id=iid)
        return None
    scores = []
    for r in results:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            issues.bad(pos, "results", "malformed output item", "a result is not an object with a grader name",
                       sample_id=iid)
            return None
        kind_of = str(r.get("type") or "").lower().replace("-grader", "").replace("_grader", "")
        kind = JUDGE if kind_of in JUDGE_GRADERS else CODE
        scores.append(Score(_grader_name(r["name"]), r.get("score") if kind == JUDGE else r.get("passed"), kind))
    return Item(pos=pos, id=iid, scores=scores, raw=rec, text=short_text(get_or(rec, "datasource_item.question")))


def _grader_name(name: str) -> str:
    """The grader's name without the run's uuid suffix (``correctness-3f2a...``)."""
    return re.sub(r"-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", "", name)


# ------------------------------------------------------------------ Batch / chat with logprobs
def _read_logprobs(source: Source, options: LoadOptions) -> Read:  # long: one pass, then the option table
    issues = IssueCollector(source.name, options.strict)
    lines = JsonLines(source, options, issues)
    rows: list[tuple[int, str, dict[str, float], str, str]] = []
    for no, obj in lines:
        parsed = _letter_row(no, obj, options, issues)
        if parsed is not None:
            rows.append(parsed)
    if not rows:
        raise CalibError(f"{source.name}: no usable line of OpenAI output with answer-letter logprobs; first "
                         "problem: " + (issues.log.issues()[0].message() if issues.log.kept else "the file is empty"))
    letters = tuple(sorted({k for r in rows for k in r[2]} | {r[3] for r in rows if r[3]}))
    outside = sum(any(k not in r[2] for k in letters) for r in rows)
    col = {k: j for j, k in enumerate(letters)}
    logits = pad_rows([np.array([r[2].get(k, -math.inf) for k in letters]) for r in rows], len(letters))
    # traffic: gold -1 names no option, so ``correct`` is a False placeholder nothing reads
    opts = OptionScores(logits=logits, gold=np.array([col.get(r[3], -1) for r in rows], dtype=np.int64),
                        letters=letters)
    out = to_judgments(opts, line=np.array([r[0] for r in rows]), item_id=np.array([r[1] for r in rows], dtype=str),
                       text=np.array([r[4] for r in rows], dtype=str))
    notes = [f"OpenAI chat outputs with logprobs: {len(rows):,} answered line(s); options {', '.join(letters)}",
             "the answer: the first token of choices[0].logprobs.content spelling an option letter; option "
             "scores: the letters' log-probabilities among that token's top_logprobs",
             "prediction = the letter with the highest probability; confidence = its softmax probability over "
             "the letters (0-1)"] + ([TRAFFIC_NOTE] if options.traffic else [])
    if outside:
        notes.append(f"{outside:,} line(s) had a letter outside the top log-probs: read as no probability "
                     "(request more top_logprobs)")
    report = LoadReport(
        source=source.name, format="openai", lines_read=lines.lines_read, blank=lines.blank, kept=len(rows),
        dropped=issues.dropped, dropped_by_reason=dict(issues.log.counts), issues=issues.log.issues(),
        fields={"confidence": "choices[0].logprobs.content[].top_logprobs", "outcome": None if options.traffic else options.outcome_key or "gold",
                "id": "custom_id"},
        scale=TOP_LABEL_SCALE.to_dict(), notes=tuple(notes),
    )
    return out, report


def _letter_row(no: int, obj: dict[str, Any], options: LoadOptions,
                issues: IssueCollector) -> tuple[int, str, dict[str, float], str, str] | None:
    """``(line, id, letter -> logprob, gold, text)`` of one line, or ``None`` (reported)."""
    cid = obj.get("custom_id", obj.get("id"))
    cid = short_text(cid)[:120] if isinstance(cid, str | int) and not isinstance(cid, bool) else f"line {no}"
    body = obj
    if "response" in obj or "custom_id" in obj:
        if obj.get("error") or not isinstance(obj.get("response"), dict):
            issues.bad(no, "error", "request failed", f"the request failed: {short_text(obj.get('error'))[:120]}",
                       sample_id=cid)
            return None
        status = get_or(obj, "response.status_code")
        body = get_or(obj, "response.body")
        if status not in (None, 200) or not isinstance(body, dict):
            issues.bad(no, "response", "request failed", f"status {short_text(status)[:10]}, no completion body",
                       sample_id=cid)
            return None
    content = get_or(body, "choices.0.logprobs.content")
    if not isinstance(content, list):
        issues.bad(no, "logprobs", "no logprobs", "choices[0].logprobs.content is missing (request logprobs: true)",
                   sample_id=cid)
        return None
    gold = "" if options.traffic else _gold(obj, options)  # traffic: no gold read ("" names no option)
    if gold is None:
        issues.bad(no, "gold", "no gold", "no gold letter on the line (join the answer key by custom_id: "
                   f"{', '.join(GOLD_KEYS)}, or --outcome-key)", sample_id=cid)
        return None
    first: dict[str, float] | None = None
    for tok in content:  # a choice between letters, not an "I" or "A" in the prose
        if not isinstance(tok, dict) or not isinstance(tok.get("token"), str) or not LETTER.match(tok["token"]):
            continue
        scores = _letter_scores(tok)
        first = first or scores
        if len(scores) >= 2:
            first = scores
            break
    if first:
        return no, cid, first, gold, short_text(get_or(body, "choices.0.message.content"))
    issues.bad(no, "logprobs", "no answer letter", "no token of the answer spells an option letter", sample_id=cid)
    return None


def _letter_scores(tok: dict[str, Any]) -> dict[str, float]:
    """Letter -> log-probability among the token and its top alternatives (same letter combined)."""
    cands = [tok] + [t for t in (tok.get("top_logprobs") or []) if isinstance(t, dict)]
    by: dict[str, list[float]] = {}
    seen: set[str] = set()
    for t in cands:
        token, lp = t.get("token"), t.get("logprob")
        if not isinstance(token, str) or token in seen or isinstance(lp, bool) or not isinstance(lp, int | float):
            continue
        seen.add(token)
        m = LETTER.match(token)
        if m is not None and math.isfinite(lp) and lp <= 0:
            by.setdefault(m.group(1), []).append(float(lp))
    return {k: float(np.logaddexp.reduce(v)) for k, v in by.items()}


def _gold(obj: dict[str, Any], options: LoadOptions) -> str | None:
    keys = (options.outcome_key,) if options.outcome_key else GOLD_KEYS
    for k in keys:
        v = get_or(obj, k)
        if is_missing(v) or v is None:
            continue
        if isinstance(v, str) and (m := LETTER.match(v.upper())):
            return m.group(1)
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 26:
            return chr(65 + v)
    return None
