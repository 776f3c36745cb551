"""One lm-eval samples file read: the samples, lm-eval's ``acc``/``acc_norm`` recomputed and
checked against the scores it stored, the rows and the report."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.options import TOP_LABEL_SCALE, length_normalise, option_letters, pad_rows, to_judgments
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import (
    TOO_DEEP,
    JsonLimitError,
    JsonLines,
    big_int,
    check_json_size,
    cluster_how,
    cluster_key,
    cluster_label,
    get_path,
    may_hold_surrogates,
    no_lone_surrogates,
)
from calib.readers.lmeval.sample import _parse_sample, _Sample
from calib.rows import Judgments, OptionScores
from calib.settings import VARIANTS

SAMPLES_RE = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.:\-]+)\.jsonl?$")
RESULTS_RE = re.compile(r"^results_(?P<date>.+)\.json$")
#: lm-eval's default ``target_delimiter``.
DEFAULT_DELIMITER = " "
#: The field of a sample's item id.
ID_FIELD = "doc_id"


def task_of(filename: str) -> str:
    """Task name from ``samples_<task>_<date>.jsonl`` (the stem when it does not match)."""
    base = _base(filename)
    m = SAMPLES_RE.match(base)
    if m:
        return m.group("task")
    stem = base.split(".")[0]
    return stem[len("samples_"):] if stem.startswith("samples_") else stem


def _base(filename: str) -> str:
    base = PurePath(filename.replace("\\", "/")).name
    return base[:-3] if base.lower().endswith(".gz") else base


def _variant_normalisation(options: LoadOptions) -> str:
    if options.variant not in VARIANTS:
        raise CalibError(f"unknown lm-eval variant {options.variant!r}; choose acc or acc_norm")
    if options.variant == "acc_norm":
        if options.normalisation not in ("none", "char"):
            raise CalibError(
                f"variant acc_norm is per-character normalisation; it cannot be combined with "
                f"normalisation {options.normalisation!r}"
            )
        return "char"
    if options.normalisation == "token":
        raise CalibError(
            "lm-eval sample logs do not record token counts, so normalisation 'token' is not "
            "possible; use variant acc, acc_norm (per character) or normalisation 'byte'"
        )
    return options.normalisation


def read(
    source: Source, options: LoadOptions, *, delimiter: str | None = None, task: str | None = None,
) -> Read:
    """Read one lm-eval samples file.

    Parameters
    ----------
    delimiter:
        The task's ``target_delimiter`` (from ``results_*.json``); default one space.
    task:
        Group name; default the task in the file name.
    """
    rows, report, _ = _read(source, options, delimiter=delimiter, task=task)
    return rows, report


#: Per metric name: (samples checked, doc_ids where the recomputed value differs).
Checks = dict[str, tuple[int, list[str]]]


def _read(
    source: Source, options: LoadOptions, *, delimiter: str | None, task: str | None,
) -> tuple[Judgments, LoadReport, Checks]:
    norm = _variant_normalisation(options)
    _refuse_results(source)
    task = task or task_of(source.name)
    delim = DEFAULT_DELIMITER if delimiter is None else delimiter
    issues = IssueCollector(source.name, options.strict)
    parsed, counter = _parse_all(source, options, issues, delim)
    samples, skipped, extra = _one_filter(parsed, task)
    if not samples:
        first = issues.log.issues()[0].message() if issues.log.kept else "the file has no samples"
        raise CalibError(f"{source.name}: no usable multiple-choice sample; first problem: {first}")
    sc = _score(samples, norm, options, issues, source.name)
    kept = [samples[i] for i in sc.idx]
    opts = OptionScores(logits=sc.scores[sc.idx], gold=sc.gold[sc.idx], letters=option_letters(sc.k),
                        normalisation=norm)
    rows = to_judgments(
        opts,
        line=np.array([s.line for s in kept]),
        item_id=np.array([s.doc_id for s in kept], dtype=str),
        group=np.full(len(kept), task, dtype=object).astype(str),
        text=np.array([s.text for s in kept], dtype=str),
        correct=sc.ok[sc.idx],
    )
    if (ckey := cluster_key(options, ID_FIELD)) is not None:
        rows = replace(rows, cluster=np.array([s.cluster for s in kept], dtype=object), cluster_how=cluster_how(ckey))
    # fixed order: task, variant, the two stored-score checks, then anything particular
    notes = [f"task {task!r}: {len(kept):,} multiple-choice samples with {sc.k} choices at most",
             _variant_note(options.variant, norm, delim)]
    checks: Checks = {}
    for name, mine in (("acc", sc.ok_acc), ("acc_norm", sc.ok_norm)):
        if options.traffic:  # no target read: nothing to check lm-eval's stored scores against
            notes.append(f"{name}: not checked against lm-eval's stored scores (traffic: no target read)")
            continue
        checks[name] = _stored_check(samples, name, mine, sc.have_len if name == "acc_norm" else None)
        notes.append(_check_note(name, *checks[name]))
    if options.traffic:  # after the four fixed notes (read_folder summarises those)
        extra.insert(0, "outcome: not read (traffic: outcomes come from the reviewers' labels)")
    extra += _particular_notes(parsed, kept, task)
    report = LoadReport(
        source=source.name, format="lmeval", lines_read=counter.lines_read, blank=counter.blank,
        kept=len(kept), dropped=issues.dropped + skipped, dropped_by_reason=_with(issues, skipped),
        issues=issues.log.issues(),
        fields={"scores": "filtered_resps", "gold": "target", "choices": "arguments.gen_args_i.arg_1",
                "id": ID_FIELD, "group": "task (file name)"},
        scale=TOP_LABEL_SCALE.to_dict(), notes=tuple(notes + extra),
    )
    return rows, report, checks


def _head(data: bytes) -> bytes:
    """The start of a file without a byte-order mark or leading blanks (what the format is told by)."""
    return data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")


def _refuse_results(source: Source) -> None:
    """Refuse lm-eval's aggregate results file, which has no per-sample scores."""
    head = _head(source.data)
    if RESULTS_RE.match(_base(source.name)) or (head[:1] == b"{" and b'"lm_eval_version"' in source.data and
                                                b'"filtered_resps"' not in head):
        raise CalibError(
            f"{source.name}: this is lm-eval's aggregate results file; it has no per-sample "
            "log-likelihoods. Run lm-eval with --log_samples and load the samples_<task>_<date>.jsonl "
            "files (or the whole output folder)"
        )


def _parse_all(source: Source, options: LoadOptions, issues: IssueCollector,
               delim: str) -> tuple[list[_Sample], JsonLines | _Count]:
    """Every sample of the file that parses (JSON Lines, or one JSON array in older
    lm-eval) and the line counter (``lines_read``, ``blank``)."""
    head = _head(source.data)
    if head[:1] == b"[":
        iterator, counter = _array_items(source, options, issues)
    else:
        # a sample keeps its choice texts: measured 2.4 times the text, plus the per-line objects
        jl = JsonLines(source, options, issues, text_factor=3.0)
        iterator, counter = iter(jl), jl
    samples: list[_Sample] = []
    ckey = cluster_key(options, ID_FIELD)
    for no, obj in iterator:
        s = _parse_sample(no, obj, delim, issues, traffic=options.traffic)
        if s is not None:
            if ckey is not None:  # the cluster field, read in this one pass
                s.cluster = cluster_label(get_path(obj, ckey))
            samples.append(s)
    return samples, counter


def _one_filter(samples: list[_Sample], task: str) -> tuple[list[_Sample], int, list[str]]:
    """The samples of one filter ("none" when present, else the first), how many of the
    others were skipped, and the note saying so."""
    filters = list(dict.fromkeys(s.filter for s in samples))
    if len(filters) <= 1:
        return samples, 0, []
    keep = "none" if "none" in filters else filters[0]
    other = [f for f in filters if f != keep]
    skipped = sum(s.filter != keep for s in samples)
    note = (f"task {task!r}: the file holds several filters ({', '.join(filters)}); read filter {keep!r}, "
            f"skipped {skipped:,} sample(s) of {', '.join(other)}")
    return [s for s in samples if s.filter == keep], skipped, [note]


@dataclass(frozen=True)
class _Scored:
    """The samples scored: per-option scores (padded to ``k``), verdicts, gold, rows kept."""

    k: int
    scores: np.ndarray
    ok: np.ndarray
    ok_acc: np.ndarray
    ok_norm: np.ndarray
    have_len: np.ndarray
    gold: np.ndarray
    idx: np.ndarray


def _score(samples: list[_Sample], norm: str, options: LoadOptions, issues: IssueCollector,
           name: str) -> _Scored:
    """lm-eval's ``acc`` and ``acc_norm`` recomputed, and the scores of the chosen
    normalisation; samples without choice texts are dropped when it needs them."""
    k = max(len(s.lls) for s in samples)
    raw = pad_rows([np.asarray(s.lls, dtype=np.float64) for s in samples], k)
    have_len = np.array([s.lens_char is not None for s in samples])
    lens_c = pad_rows([np.asarray(s.lens_char if s.lens_char is not None else [1.0] * len(s.lls))
                       for s in samples], k)
    lens_b = pad_rows([np.asarray(s.lens_byte if s.lens_byte is not None else [1.0] * len(s.lls))
                       for s in samples], k)
    golds = [s.gold for s in samples]

    def right(scores: np.ndarray) -> np.ndarray:
        # lm-eval's argmax is over the unpadded row; -inf padding never wins it
        return np.array([p in g for p, g in zip(np.argmax(scores, axis=1), golds, strict=True)])

    ok_acc = right(raw)
    ok_norm = right(length_normalise(raw, lens_c))
    keep_mask = np.ones(len(samples), dtype=bool)
    if norm in ("char", "byte") and not have_len.all():
        for i in np.flatnonzero(~have_len):
            issues.bad(samples[i].line, "arguments", "no choice texts",
                       f"no choice texts (arguments.gen_args_i.arg_1) to divide by for {options.variant}"
                       + (f" / normalisation {norm}" if options.variant != "acc_norm" else ""),
                       sample_id=samples[i].doc_id)
        keep_mask = have_len
        if not keep_mask.any():
            raise CalibError(f"{name}: no sample has choice texts, so {options.variant} cannot be computed")
    if norm == "none":
        scores, ok = raw, ok_acc
    elif norm == "char":
        scores, ok = length_normalise(raw, lens_c), ok_norm
    else:
        scores = length_normalise(raw, lens_b)
        ok = right(scores)
    pred = np.argmax(scores, axis=1)
    gold_idx = np.array([p if p in g else g[0] for p, g in zip(pred, golds, strict=True)], dtype=np.int64)
    return _Scored(k=k, scores=scores, ok=ok, ok_acc=ok_acc, ok_norm=ok_norm, have_len=have_len,
                   gold=gold_idx, idx=np.flatnonzero(keep_mask))


def _particular_notes(parsed: list[_Sample], kept: list[_Sample], task: str) -> list[str]:
    """Notes on what only some tasks have: several right choices, numeric targets read as
    texts (among the rows kept), multiple-input tasks (among every sample parsed)."""
    extra: list[str] = []
    multi_gold = sum(len(s.gold) > 1 for s in kept)
    if multi_gold:
        extra.append(f"task {task!r}: {multi_gold:,} sample(s) have several right choices: "
                     "correct when the prediction is any of them")
    n_text = sum(s.text_target for s in kept)
    if n_text:
        extra.append(f"task {task!r}: {n_text:,} numeric target(s) read as a choice text, not an index "
                     "(out of range as an index, or only the text reading reproduces lm-eval's stored scores)")
    multiple_input = sum(s.multi for s in parsed)
    if multiple_input:
        extra.append(f"task {task!r}: {multiple_input:,} sample(s) vary the context, not the continuation (a multiple-input "
                     "task such as winogrande): acc_norm lengths use the shared continuation")
    return extra


def _with(issues: IssueCollector, skipped: int) -> dict[str, int]:
    d = dict(issues.log.counts)
    if skipped:
        d["other filter"] = skipped
    return d


def _variant_note(variant: str, norm: str, delim: str) -> str:
    if norm == "none":
        return (f"variant {variant}: scores are lm-eval's raw log-likelihoods; prediction = argmax, "
                "confidence = top softmax probability over the choices")
    unit = "characters" if norm == "char" else "UTF-8 bytes"
    return (f"variant {variant}: each log-likelihood divided by the number of {unit} of its choice text "
            f"without the leading target delimiter {delim!r} (lm-eval's completion_len); prediction = argmax, "
            "confidence = top softmax probability of the normalised scores")


def _stored_check(
    samples: list[_Sample], name: str, mine: np.ndarray, usable: np.ndarray | None,
) -> tuple[int, list[str]]:
    idx = [i for i, s in enumerate(samples) if name in s.stored and (usable is None or usable[i])]
    bad = [samples[i].doc_id for i in idx if bool(samples[i].stored[name] >= 0.5) != bool(mine[i])]
    return len(idx), bad


def _check_note(name: str, checked: int, bad: list[str]) -> str:
    if not checked:
        return f"lm-eval stored no per-sample {name} to check against"
    if not bad:
        return f"recomputed {name} equals the {name} lm-eval stored on all {checked:,} samples"
    return (f"WARNING: recomputed {name} differs from the {name} lm-eval stored on {len(bad):,} of "
            f"{checked:,} samples (doc_id {', '.join(bad[:5])}{'...' if len(bad) > 5 else ''}); "
            "the gold or the choice texts may be read differently from the task's config")


@dataclass
class _Count:
    """Samples read from a JSON array (the counts :class:`~calib.readers.jsonl.JsonLines` keeps)."""

    lines_read: int = 0
    blank: int = 0


def _array_items(source: Source, options: LoadOptions, issues: IssueCollector,
                 ) -> tuple[Iterator[tuple[int, dict[str, Any]]], _Count]:
    """Items of a file holding one JSON array (older lm-eval); position = 1-based index."""
    counter = _Count()

    def gen() -> Iterator[tuple[int, dict[str, Any]]]:
        try:
            check_json_size(source.data, "the JSON array", options, whole_file=True)
            text = source.data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CalibError(f"{source.name}: not UTF-8 text (byte {exc.start})") from None
        except JsonLimitError as exc:
            raise CalibError(f"{source.name}: {exc}; write the samples as JSON Lines (lm-eval >= 0.4.3 does)") from None
        dec = json.JSONDecoder()
        escapes = may_hold_surrogates(text)
        pos = text.index("[") + 1
        n = 0
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text):
                counter.lines_read = n + 1
                issues.bad(n + 1, None, "truncated file",
                           f"the JSON array ends after sample {n} without its closing ']' (file truncated?)")
                return
            if text[pos] == "]":
                return
            n += 1
            counter.lines_read = n
            if n > options.max_rows:
                raise CalibError(f"{source.name}: more than {options.max_rows:,} samples; refused")
            try:
                try:
                    obj, end = dec.raw_decode(text, pos)
                except json.JSONDecodeError:
                    raise
                except ValueError:  # an integer over Python's digit limit: read as a float
                    obj, end = json.JSONDecoder(parse_int=big_int).raw_decode(text, pos)
            except RecursionError:  # where the sample ends is unknown: the rest is lost too
                issues.bad(n, None, "invalid JSON", f"sample {n} cannot be read: {TOO_DEEP}; "
                           "the rest of the array cannot be read", preview=text[pos:pos + 160])
                return
            except json.JSONDecodeError as exc:
                line = text.count("\n", 0, exc.pos) + 1
                issues.bad(n, None, "truncated file" if exc.pos >= len(text) - 1 else "invalid JSON",
                           f"sample {n} is not valid JSON ({exc.msg}, text line {line}); "
                           "the rest of the array cannot be read (file truncated?)",
                           preview=text[pos:pos + 160])
                return
            pos = end
            if escapes:
                obj = no_lone_surrogates(obj)
            if not isinstance(obj, dict):
                issues.bad(n, None, "not a JSON object", f"sample {n} is a {type(obj).__name__}, not an object")
                continue
            yield n, obj

    return gen(), counter
