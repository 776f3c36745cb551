"""An lm-eval output folder: one samples file per task read as one set of rows, the task
being the group, checked against ``results_*.json``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.loadreport import LoadReport, merge_reports
from calib.options import option_letters
from calib.readers.base import LoadOptions, Read
from calib.readers.jsonl import as_number, check_json_size, json_loads
from calib.readers.lmeval.file import RESULTS_RE, SAMPLES_RE, Checks, _base, _check_note, _read, task_of
from calib.readers.source import read_source
from calib.rows import Judgments, OptionScores


def read_folder(files: list[tuple[str, bytes]], *, name: str, options: LoadOptions) -> Read:
    """Read an lm-eval output folder (one samples file per task) as one set of rows.

    The task is the group (the 57 MMLU subjects become 57 groups). ``results_*.json``
    files are not samples: they are skipped, named in the notes, and used for each
    task's ``target_delimiter`` and to check the recomputed accuracy against lm-eval's
    aggregate. Other files are skipped and named. When one task has several samples
    files (several runs in one folder), the newest (by the date in the name) is read.
    With several tasks an item id is ``<task>/<doc_id>`` (doc ids repeat across tasks).
    A samples file that cannot be read at all (a generation task, say) is skipped and
    named in the notes, unless ``options.strict``. :func:`calib.loading.load_many`
    makes the dataset (clusters of repeated task/doc_id, count table).
    """
    options = options or LoadOptions()
    notes: list[str] = []
    samples_files, results = _sort_files(files, name, options, notes)
    configs: dict[str, Any] = {}
    aggregates: dict[str, Any] = {}
    for _, obj in sorted(results):
        configs.update(obj.get("configs") or {})
        aggregates.update(obj.get("results") or {})
    parts, reports, checks = _read_tasks(samples_files, configs, options, notes)
    if not parts:
        raise CalibError(f"{name}: no samples file could be read; " + "; ".join(notes[-3:]))
    rows = concat(parts)
    tasks = [str(p.group[0]) for p in parts if p.group is not None and len(p)]
    head = [f"{len(parts)} task(s) read, the task being the group: {', '.join(tasks[:8])}"
            f"{', ...' if len(tasks) > 8 else ''}"]
    variant_notes = list(dict.fromkeys(r.notes[1] for r in reports))
    head.append(variant_notes[0] if len(variant_notes) == 1 else
                f"variant {options.variant}; the target delimiter differs between tasks: " + " | ".join(variant_notes))
    head += [_check_note(m, *checks[m]) for m in ("acc", "acc_norm") if m in checks]
    if aggregates and not options.traffic:  # traffic: no target read, nothing to check
        head.append(_aggregate_check(parts, reports, aggregates, options.variant))
    # per-task notes other than the ones summarised above (filters, multiple targets...)
    rest = [n for r in reports for n in r.notes[4:]]
    report = merge_reports(reports, source=name, fmt="lmeval")
    return rows, replace(report, notes=tuple(dict.fromkeys(head + notes + rest)))


def _sort_files(files: list[tuple[str, bytes]], name: str, options: LoadOptions, notes: list[str],
                ) -> tuple[dict[str, list[tuple[str, str, bytes]]], list[tuple[str, dict[str, Any]]]]:
    """The samples files by task (``(date, path, data)`` each) and the parsed results
    files; every other file is skipped and named in ``notes``."""
    samples_files: dict[str, list[tuple[str, str, bytes]]] = {}
    results: list[tuple[str, dict[str, Any]]] = []
    for path, data in files:
        base = _base(path)
        if RESULTS_RE.match(base):
            try:
                src = read_source(path, data, options)
                check_json_size(src.data, base, options)
                obj = json_loads(src.data.decode("utf-8-sig"))
                if isinstance(obj, dict):
                    results.append((base, obj))
                notes.append(f"skipped {base}: lm-eval's aggregate results (used to check the recomputed scores)")
            except (ValueError, CalibError) as exc:
                notes.append(f"skipped {base}: an lm-eval results file that cannot be read ({str(exc)[:80]})")
            continue
        m = SAMPLES_RE.match(base)
        if m is None and not (base.startswith("samples_") and base.endswith((".jsonl", ".json"))):
            notes.append(f"skipped {base}: not an lm-eval samples_<task>_<date>.jsonl file")
            continue
        task = m.group("task") if m else task_of(base)
        date = m.group("date") if m else ""
        samples_files.setdefault(task, []).append((date, path, data))
    if not samples_files:
        given = ", ".join(_base(p) for p, _ in files[:5]) or "no files"
        raise CalibError(
            f"{name}: no lm-eval samples files (samples_<task>_<date>.jsonl) among {given}"
            f"{'...' if len(files) > 5 else ''}; run lm-eval with --log_samples"
        )
    return samples_files, results


def _read_tasks(samples_files: dict[str, list[tuple[str, str, bytes]]], configs: dict[str, Any],
                options: LoadOptions, notes: list[str]) -> tuple[list[Judgments], list[LoadReport], Checks]:
    """The newest samples file of each task read with the task's delimiter; the checks
    of the stored scores summed over tasks (doc ids as ``task/doc_id``)."""
    parts: list[Judgments] = []
    reports: list[LoadReport] = []
    checks: Checks = {}
    several = len(samples_files) > 1
    for task in sorted(samples_files):
        versions = sorted(samples_files[task], key=lambda t: t[0])
        date, path, data = versions[-1]
        for _, old, _ in versions[:-1]:
            notes.append(f"skipped {_base(old)}: an older run of task {task!r} (read {_base(path)})")
        cfg = configs.get(task) or {}
        delim = cfg.get("target_delimiter") if isinstance(cfg.get("target_delimiter"), str) else None
        src = read_source(path, data, options)
        try:
            rows, rep, chk = _read(src, options, delimiter=delim, task=task)
        except CalibError as exc:
            if options.strict:
                raise
            notes.append(f"skipped {_base(path)}: {exc}")
            continue
        for metric, (n_checked, bad) in chk.items():
            prev = checks.get(metric, (0, []))
            checks[metric] = (prev[0] + n_checked, prev[1] + [f"{task}/{b}" for b in bad])
        if several:
            rows = replace(rows, item_id=np.char.add(f"{task}/", rows.item_id.astype(str)))
        parts.append(rows)
        reports.append(rep)
    return parts, reports, checks


def _aggregate_check(parts: list[Judgments], reports: list[LoadReport], aggregates: dict[str, Any],
                     variant: str) -> str:
    agree, differ, unchecked = 0, [], 0
    for rows, rep in zip(parts, reports, strict=True):
        task = str(rows.group[0]) if rows.group is not None and len(rows) else ""
        res = aggregates.get(task) or {}
        key = next((k for k in res if k.split(",")[0] == variant), None)
        stored = as_number(res.get(key)) if key else None
        if stored is None or rep.dropped:
            unchecked += 1
            continue
        mine = float(np.mean(rows.correct))
        if abs(mine - stored) <= 1e-9:
            agree += 1
        else:
            differ.append(f"{task} {mine:.4f} vs {stored:.4f}")
    msg = f"checked against results_*.json: recomputed {variant} equals lm-eval's aggregate for {agree} task(s)"
    if differ:
        msg += f"; DIFFERS for {len(differ)}: {', '.join(differ[:5])}"
    if unchecked:
        msg += f"; {unchecked} task(s) not checked (no aggregate, or lines dropped)"
    return msg


def concat(parts: list[Judgments]) -> Judgments:
    """Rows of several readers as one :class:`Judgments` (option columns padded to the widest)."""
    if len(parts) == 1:
        return parts[0]
    k = max(p.options.logits.shape[1] for p in parts if p.options is not None)
    logits = np.concatenate([
        np.pad(p.options.logits, ((0, 0), (0, k - p.options.logits.shape[1])), constant_values=-np.inf)
        for p in parts if p.options is not None
    ])
    first = parts[0]
    assert first.options is not None
    opts = OptionScores(
        logits=logits,
        gold=np.concatenate([p.options.gold for p in parts if p.options is not None]),
        letters=option_letters(k),
        normalisation=first.options.normalisation,
    )

    def cat(attr: str) -> np.ndarray | None:
        arrs = [getattr(p, attr) for p in parts]
        if any(a is None for a in arrs):
            return None
        return np.concatenate(arrs)

    return Judgments(
        stated=np.concatenate([p.stated for p in parts]),
        prob=np.concatenate([p.prob for p in parts]),
        correct=np.concatenate([p.correct for p in parts]),
        line=np.concatenate([p.line for p in parts]),
        item_id=np.concatenate([p.item_id.astype(str) for p in parts]),
        scale=first.scale,
        group=cat("group"),
        options=opts,
        text=cat("text"),
        cluster=(cluster := cat("cluster")),  # --cluster-key's values, read by each file's reader
        cluster_how=first.cluster_how if cluster is not None else "",
    )
