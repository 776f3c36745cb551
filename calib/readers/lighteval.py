"""Reader for lighteval details: ``details_{task}_{date}.parquet``.

Layout (made with lighteval 0.13.0's own ``DetailsLogger.Detail`` and saved as its
``EvaluationTracker`` saves it): one row per sample, struct columns ``doc`` (``query``,
``choices``, ``gold_index``: an int or a list, ``id``, ``specific``), ``model_response``
(``logprobs``: one log-likelihood per choice for loglikelihood tasks, ``text``...) and
``metric`` (the sample's metric values, ``acc`` for ``loglikelihood_acc``). Other
versions add or drop columns; only ``doc.gold_index`` and ``model_response.logprobs``
are needed.

What is read
    The option path, as for option log-probs: the choices' log-likelihoods are the option
    scores, the prediction their argmax, the confidence its softmax probability over the
    choices (:func:`calib.options.to_judgments`); right when the prediction is a gold
    index (several golds allowed). ``metric.acc``, when present, is lighteval's own
    reading of the same sample and is checked against calib's (a note counts the
    agreement). A sample with no log-likelihoods (a generative task, a failed sample), a
    gold outside its choices or more than :data:`~calib.options.MAX_OPTIONS` choices is
    a bad row, named by its id (``doc.id``, else ``doc.specific.id``, else its row).
Limits
    The file's metadata row count is checked against ``max_rows`` before reading, and
    rows and decoded bytes are counted again batch by batch (``max_rows``,
    ``max_parse_bytes``); only the needed leaf columns are decoded (never the prompts).
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.options import MAX_OPTIONS, TOP_LABEL_SCALE, option_letters, pad_rows, to_judgments
from calib.readers.base import TRAFFIC_NOTE, IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import as_number
from calib.rows import OptionScores

#: Rows decoded at a time.
BATCH = 4_096
COLUMNS = ("doc.gold_index", "doc.id", "doc.specific", "model_response.logprobs", "metric")


def read(source: Source, options: LoadOptions) -> Read:  # long: read under limits, then the option table
    """Read a lighteval details Parquet file into top-label judgments."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(io.BytesIO(source.data))
    except (pa.ArrowException, OSError) as exc:
        raise CalibError(f"{source.name}: not a readable Parquet file ({exc})") from None
    if pf.metadata.num_rows > options.max_rows:
        raise CalibError(f"{source.name}: more than {options.max_rows:,} rows (the file's metadata says "
                         f"{pf.metadata.num_rows:,}); refused")
    names = {f"{top.name}.{child.name}" for top in pf.schema_arrow if pa.types.is_struct(top.type)
             for child in top.type} | set(pf.schema_arrow.names)
    if not {"model_response.logprobs"} | (set() if options.traffic else {"doc.gold_index"}) <= names:
        raise CalibError(f"{source.name}: not lighteval details (no doc.gold_index and model_response.logprobs)")
    issues = IssueCollector(source.name, options.strict)
    kept: list[tuple[int, str, np.ndarray, list[int], float | None]] = []
    rows = used = 0
    for batch in pf.iter_batches(batch_size=BATCH, columns=[c for c in COLUMNS if c in names], use_threads=False):
        used += sum(col.nbytes for col in batch.columns)
        if rows + batch.num_rows > options.max_rows or used > options.max_parse_bytes:
            raise CalibError(f"{source.name}: more than {options.max_rows:,} rows or "
                             f"{options.max_parse_bytes / 2**20:,.0f} MB decoded (at row {rows:,}); refused")
        for rec in batch.to_pylist():
            rows += 1
            row = _row(rows, rec, issues, traffic=options.traffic)
            if row is not None:
                kept.append(row)
    if not kept:
        raise CalibError(f"{source.name}: no usable sample; first problem: "
                         + (issues.log.issues()[0].message() if issues.log.kept else "the file has no rows"))
    k = max(r[2].size for r in kept)
    gold = np.array([r[3][0] if r[3] else -1 for r in kept], dtype=np.int64)  # traffic: -1, no option
    logits = pad_rows([r[2] for r in kept], k)
    pred = np.argmax(logits, axis=1)
    correct = np.array([int(p) in r[3] for p, r in zip(pred, kept, strict=True)], dtype=bool)
    opts = OptionScores(logits=logits, gold=gold, letters=option_letters(k))
    out = to_judgments(opts, line=np.array([r[0] for r in kept]), item_id=np.array([r[1] for r in kept], dtype=str),
                       correct=correct)
    notes = [f"lighteval details: {rows:,} sample(s), {k} choices at most; prediction = the choice with the "
             "highest log-likelihood, confidence = its softmax probability over the choices (0-1)"]
    if options.traffic:
        notes.append(TRAFFIC_NOTE)
    accs = [(r[4] == 1.0, c) for r, c in zip(kept, correct, strict=True) if r[4] is not None and r[3]]
    if accs:
        agree = sum(a == c for a, c in accs)
        notes.append(f"lighteval's metric.acc agrees with the argmax on {agree:,} of {len(accs):,} sample(s)")
    report = LoadReport(
        source=source.name, format="lighteval", lines_read=rows, kept=len(kept), dropped=issues.dropped,
        dropped_by_reason=dict(issues.log.counts),
        issues=tuple(_record(i) for i in issues.log.issues()),
        fields={"confidence": "model_response.logprobs", "outcome": None if options.traffic else "doc.gold_index",
                "id": "doc.id"},
        scale=TOP_LABEL_SCALE.to_dict(), notes=tuple(notes),
    )
    return out, report


def _record(issue: Any) -> Any:
    import dataclasses

    return dataclasses.replace(issue, unit="row")


def _row(n: int, rec: dict[str, Any], issues: IssueCollector, *, traffic: bool = False
         ) -> tuple[int, str, np.ndarray, list[int], float | None] | None:
    """``(row, id, log-likelihoods, gold indices, metric.acc)`` of one sample, or ``None``
    (reported); ``traffic``: no gold read (an empty list)."""
    doc = rec.get("doc") or {}
    sid = doc.get("id") or (doc.get("specific") or {}).get("id") if isinstance(doc, dict) else None
    sid = str(sid)[:120] if isinstance(sid, str | int) and not isinstance(sid, bool) and str(sid) else f"row {n}"
    lps = (rec.get("model_response") or {}).get("logprobs")
    if not lps:
        issues.bad(n, "model_response.logprobs", "no logprobs", "the sample has no choice log-likelihoods",
                   sample_id=sid)
        return None
    if len(lps) > MAX_OPTIONS:
        issues.bad(n, "model_response.logprobs", "too many options", f"{len(lps):,} choices, over {MAX_OPTIONS:,}",
                   sample_id=sid)
        return None
    v = np.array([x if isinstance(x, int | float) and not isinstance(x, bool) else math.nan for x in lps], dtype=float)
    if not np.all(np.isfinite(v) | (v == -np.inf)) or np.all(v == -np.inf):
        issues.bad(n, "model_response.logprobs", "bad logprobs", "a log-likelihood is missing or not a number",
                   sample_id=sid)
        return None
    if traffic:
        return n, sid, v, [], None
    g = doc.get("gold_index") if isinstance(doc, dict) else None
    golds = [g] if isinstance(g, int) else list(g) if isinstance(g, list) else []
    if not golds or not all(isinstance(x, int) and 0 <= x < v.size for x in golds):
        issues.bad(n, "doc.gold_index", "bad gold", f"gold index {g!r} is not among the {v.size} choices",
                   sample_id=sid)
        return None
    metric = rec.get("metric")
    acc = as_number(metric.get("acc")) if isinstance(metric, dict) else None
    return n, sid, v, golds, acc
