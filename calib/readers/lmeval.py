"""Reader for lm-evaluation-harness sample logs (``--log_samples``).

lm-eval writes one ``samples_<task>_<date>.jsonl`` per task (versions before about
0.4.3 wrote one JSON array into the file) next to ``results_<date>.json``. For a
``multiple_choice`` task each sample holds:

- ``filtered_resps``: one ``[log-likelihood, is_greedy]`` pair per choice, the
  numbers written as strings (``["-6.358", "False"]``);
- ``arguments``: ``{"gen_args_0": {"arg_0": <context>, "arg_1": " <choice>"}, ...}``
  (older logs: a list of ``[context, continuation]``), each continuation being the
  choice text after the task's ``target_delimiter`` (default one space);
- ``target``: the gold as lm-eval's ``doc_to_target`` gave it, stringified: an index
  (``"2"``), a choice text, or a list of either; the raw label sits in ``doc``;
- ``acc`` / ``acc_norm``: lm-eval's own per-sample scores.

Two variants are read, exactly as lm-eval's ``ConfigurableTask.process_results``
computes them (``lm_eval/api/task.py``, multiple_choice branch)::

    pred      = argmax(lls)                      # acc
    pred_norm = argmax(lls / completion_len)     # acc_norm
    completion_len = [len(choice) for choice in doc_to_choice(doc)]

``doc_to_choice`` returns the choice texts *without* the target delimiter, so
``acc_norm`` divides by the character length of the continuation minus its
leading delimiter. The gold follows lm-eval's rules: a digit string is an index
(its template rule), another string is looked up among the choices, a list means
several right choices (correct if the prediction is any of them).

Confidence is the top softmax probability of the scores the variant ranks by
(raw log-likelihoods for ``acc``, per-character ones for ``acc_norm``), the group
the task name. The recomputed per-sample ``acc`` and ``acc_norm`` are compared with
the values lm-eval stored, and in a folder with the aggregates in
``results_*.json``; the load report says whether they agree.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from dataclasses import replace
from pathlib import PurePath
from typing import Any

import numpy as np

from calib import clusters
from calib.dataset import Dataset
from calib.errors import CalibError
from calib.loading import (
    TOO_DEEP,
    JsonLimitError,
    LoadOptions,
    Source,
    big_int,
    check_json_size,
    json_loads,
    may_hold_surrogates,
    no_lone_surrogates,
    read_source,
)
from calib.loadreport import LoadReport, merge_reports
from calib.options import TOP_LABEL_SCALE, length_normalise, option_letters, pad_rows, to_judgments
from calib.readers.logprobs import IssueCollector, JsonLines, as_number, short_text
from calib.rows import Judgments, OptionScores
from calib.table import from_judgments

VARIANTS = ("acc", "acc_norm")
SAMPLES_RE = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.:\-]+)\.jsonl?$")
RESULTS_RE = re.compile(r"^results_(?P<date>.+)\.json$")
#: lm-eval's default ``target_delimiter``.
DEFAULT_DELIMITER = " "
QUESTION_KEYS = ("question", "query", "ctx", "goal", "sentence", "text", "premise")


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


class _Sample:
    __slots__ = ("line", "doc_id", "lls", "lens_char", "lens_byte", "gold", "stored", "text", "filter", "multi",
                 "text_target")

    def __init__(self) -> None:
        self.line = 0
        self.doc_id = ""
        self.lls: list[float] = []
        self.lens_char: list[float] | None = None
        self.lens_byte: list[float] | None = None
        self.gold: list[int] = []
        self.stored: dict[str, float] = {}
        self.text = ""
        self.filter = "none"
        self.multi = False
        self.text_target = False


def read(
    source: Source, options: LoadOptions, *, delimiter: str | None = None, task: str | None = None,
) -> tuple[Judgments, LoadReport]:
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
    base = _base(source.name)
    head = source.data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    if RESULTS_RE.match(base) or (head[:1] == b"{" and b'"lm_eval_version"' in source.data and
                                  b'"filtered_resps"' not in head):
        raise CalibError(
            f"{source.name}: this is lm-eval's aggregate results file; it has no per-sample "
            "log-likelihoods. Run lm-eval with --log_samples and load the samples_<task>_<date>.jsonl "
            "files (or the whole output folder)"
        )
    task = task or task_of(source.name)
    delim = DEFAULT_DELIMITER if delimiter is None else delimiter
    issues = IssueCollector(source.name, options.strict)
    samples: list[_Sample] = []
    multiple_input = 0
    if head[:1] == b"[":
        iterator, counter = _array_items(source, options, issues)
    else:
        # a sample keeps its choice texts: measured 2.4 times the text, plus the per-line objects
        jl = JsonLines(source, options, issues, text_factor=3.0)
        iterator, counter = iter(jl), jl
    for no, obj in iterator:
        s = _parse_sample(no, obj, delim, issues)
        if s is None:
            continue
        multiple_input += s.multi
        samples.append(s)

    filters = list(dict.fromkeys(s.filter for s in samples))
    extra: list[str] = []
    if len(filters) > 1:
        keep = "none" if "none" in filters else filters[0]
        other = [f for f in filters if f != keep]
        extra.append(f"task {task!r}: the file holds several filters ({', '.join(filters)}); read filter {keep!r}, "
                     f"skipped {sum(s.filter != keep for s in samples):,} sample(s) of {', '.join(other)}")
        skipped = sum(s.filter != keep for s in samples)
        samples = [s for s in samples if s.filter == keep]
    else:
        skipped = 0

    if not samples:
        first = issues.log.issues()[0].message() if issues.log.kept else "the file has no samples"
        raise CalibError(f"{source.name}: no usable multiple-choice sample; first problem: {first}")

    k = max(len(s.lls) for s in samples)
    raw = pad_rows([np.asarray(s.lls, dtype=np.float64) for s in samples], k)
    have_len = np.array([s.lens_char is not None for s in samples])
    lens_c = pad_rows([np.asarray(s.lens_char if s.lens_char is not None else [1.0] * len(s.lls))
                       for s in samples], k)
    lens_b = pad_rows([np.asarray(s.lens_byte if s.lens_byte is not None else [1.0] * len(s.lls))
                       for s in samples], k)
    # lm-eval's argmax is over the unpadded row; -inf padding never wins it
    pred_acc = np.argmax(raw, axis=1)
    pred_norm = np.argmax(length_normalise(raw, lens_c), axis=1)
    golds = [s.gold for s in samples]
    ok_acc = np.array([p in g for p, g in zip(pred_acc, golds, strict=True)])
    ok_norm = np.array([p in g for p, g in zip(pred_norm, golds, strict=True)])

    keep_mask = np.ones(len(samples), dtype=bool)
    if norm in ("char", "byte") and not have_len.all():
        for i in np.flatnonzero(~have_len):
            issues.bad(samples[i].line, "arguments", "no choice texts",
                       f"no choice texts (arguments.gen_args_i.arg_1) to divide by for {options.variant}"
                       + (f" / normalisation {norm}" if options.variant != "acc_norm" else ""),
                       sample_id=samples[i].doc_id)
        keep_mask = have_len
        if not keep_mask.any():
            raise CalibError(f"{source.name}: no sample has choice texts, so {options.variant} cannot be computed")
    if norm == "none":
        scores, ok = raw, ok_acc
    elif norm == "char":
        scores, ok = length_normalise(raw, lens_c), ok_norm
    else:
        scores = length_normalise(raw, lens_b)
        pb = np.argmax(scores, axis=1)
        ok = np.array([p in g for p, g in zip(pb, golds, strict=True)])
    pred = np.argmax(scores, axis=1)
    gold_idx = np.array([p if p in g else g[0] for p, g in zip(pred, golds, strict=True)], dtype=np.int64)

    idx = np.flatnonzero(keep_mask)
    kept = [samples[i] for i in idx]
    opts = OptionScores(logits=scores[idx], gold=gold_idx[idx], letters=option_letters(k), normalisation=norm)
    rows = to_judgments(
        opts,
        line=np.array([s.line for s in kept]),
        item_id=np.array([s.doc_id for s in kept], dtype=str),
        group=np.full(len(kept), task, dtype=object).astype(str),
        text=np.array([s.text for s in kept], dtype=str),
        correct=ok[idx],
    )

    # fixed order: task, variant, the two stored-score checks, then anything particular
    notes = [f"task {task!r}: {len(kept):,} multiple-choice samples with {k} choices at most",
             _variant_note(options.variant, norm, delim)]
    checks: Checks = {}
    for name, mine in (("acc", ok_acc), ("acc_norm", ok_norm)):
        checks[name] = _stored_check(samples, name, mine, have_len if name == "acc_norm" else None)
        notes.append(_check_note(name, *checks[name]))
    if sum(len(s.gold) > 1 for s in kept):
        extra.append(f"task {task!r}: {sum(len(s.gold) > 1 for s in kept):,} sample(s) have several right choices: "
                     "correct when the prediction is any of them")
    n_text = sum(s.text_target for s in kept)
    if n_text:
        extra.append(f"task {task!r}: {n_text:,} numeric target(s) read as a choice text, not an index "
                     "(out of range as an index, or only the text reading reproduces lm-eval's stored scores)")
    if multiple_input:
        extra.append(f"task {task!r}: {multiple_input:,} sample(s) vary the context, not the continuation (a multiple-input "
                     "task such as winogrande): acc_norm lengths use the shared continuation")
    report = LoadReport(
        source=source.name, format="lmeval", lines_read=counter.lines_read, blank=counter.blank,
        kept=len(kept), dropped=issues.dropped + skipped, dropped_by_reason=_with(issues, skipped),
        issues=issues.log.issues(),
        fields={"scores": "filtered_resps", "gold": "target", "choices": "arguments.gen_args_i.arg_1",
                "id": "doc_id", "group": "task (file name)"},
        scale=TOP_LABEL_SCALE.to_dict(), notes=tuple(notes + extra),
    )
    return rows, report, checks


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


def _array_items(source: Source, options: LoadOptions, issues: IssueCollector):  # type: ignore[no-untyped-def]
    """Items of a file holding one JSON array (older lm-eval); position = 1-based index."""

    class Counter:
        lines_read = 0
        blank = 0

    counter = Counter()

    def gen():  # type: ignore[no-untyped-def]
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


def _parse_sample(no: int, obj: dict[str, Any], delim: str, issues: IssueCollector) -> _Sample | None:
    s = _Sample()
    s.line = no
    did = obj.get("doc_id")
    s.doc_id = "" if did is None else str(did)
    sid = s.doc_id or None
    s.filter = str(obj.get("filter", "none"))
    resps = obj.get("filtered_resps")
    if resps is None and isinstance(obj.get("resps"), list):
        # resps nests one more level: one list of responses per request
        resps = [r[0] if isinstance(r, list) and r and isinstance(r[0], list) else r for r in obj["resps"]]
    if not isinstance(resps, list):
        issues.bad(no, "filtered_resps", "not an lm-eval sample",
                   "no filtered_resps list: not an lm-eval samples line", sample_id=sid,
                   preview=json.dumps(obj)[:160])
        return None
    lls: list[float] = []
    for j, e in enumerate(resps):
        v = e[0] if isinstance(e, (list, tuple)) and e else e
        try:  # the common case, a numeric string, without the general helper
            x: float | None = float(v) if isinstance(v, str) else as_number(v)
        except ValueError:
            x = None
        if x is None or x != x or x == float("inf"):
            kind = "generated text" if isinstance(v, str) else type(v).__name__
            issues.bad(no, "filtered_resps", "not a multiple-choice sample",
                       f"choice {j + 1} of filtered_resps is {kind} ({str(v)[:40]!r}), not a log-likelihood "
                       "(a generate_until task? calib reads multiple_choice tasks)", sample_id=sid)
            return None
        lls.append(x)
    args = _continuations(obj.get("arguments"))
    metrics = obj.get("metrics") or []
    if "acc_mutual_info" in metrics and len(lls) % 2 == 0 and len(lls) >= 4:
        # the second half holds the unconditional log-likelihoods (lm-eval's mutual-info layout)
        lls = lls[: len(lls) // 2]
        if args is not None:
            args = args[: len(lls)]
    if len(lls) < 2:
        issues.bad(no, "filtered_resps", "not a multiple-choice sample",
                   f"{len(lls)} log-likelihood(s); a multiple-choice sample has one per choice (2 or more)",
                   sample_id=sid)
        return None
    if max(lls) == float("-inf"):
        issues.bad(no, "filtered_resps", "not a multiple-choice sample",
                   "every log-likelihood is -inf", sample_id=sid)
        return None
    s.lls = lls
    choices: list[str] | None = None
    if args is not None:
        conts = [a[1] for a in args]
        ctxs = [a[0] for a in args]
        if len(conts) != len(lls):
            issues.bad(no, "arguments", "choices and scores differ",
                       f"{len(conts)} choice texts but {len(lls)} log-likelihoods", sample_id=sid)
            return None
        choices = [c[len(delim):] if delim and c.startswith(delim) else c for c in conts]
        # winogrande-style tasks vary the context and share the continuation
        s.multi = len(set(conts)) == 1 and len(set(ctxs)) > 1
        lens = [float(len(c)) for c in choices]
        if 0.0 not in lens:
            s.lens_char = lens
            s.lens_byte = [float(len(c.encode("utf-8"))) for c in choices]
    else:
        doc_choices = (obj.get("doc") or {}).get("choices") if isinstance(obj.get("doc"), dict) else None
        if isinstance(doc_choices, list) and len(doc_choices) == len(lls) and all(isinstance(c, str) for c in doc_choices):
            choices = list(doc_choices)
    for name in ("acc", "acc_norm"):
        v = as_number(obj.get(name))
        if v is not None:
            s.stored[name] = v
    target = obj.get("target")
    gold = _gold(target, choices, len(lls))
    if isinstance(target, str) and target.strip().isdigit() and choices is not None and (
            target in choices or target.strip() in (c.strip() for c in choices)):
        # "7" may be an index or a choice text ("0", "7", "14", "1"): the stringified
        # target cannot tell, lm-eval's own per-sample verdicts can
        alt = _gold(target, choices, len(lls), as_text=True)
        if not isinstance(alt, str) and (isinstance(gold, str) or (
                alt != gold and _agrees(s, alt) and not _agrees(s, gold))):
            gold, s.text_target = alt, True
    if isinstance(gold, str):
        issues.bad(no, "target", "gold not among choices", gold, sample_id=sid)
        return None
    s.gold = gold
    doc = obj.get("doc")
    q = next((doc[k] for k in QUESTION_KEYS if isinstance(doc, dict) and isinstance(doc.get(k), str)), None)
    if q is None and args:
        q = args[0][0]
    s.text = short_text(q)
    return s


def _continuations(args: Any) -> list[tuple[str, str]] | None:
    """``[(context, continuation), ...]`` from ``arguments`` in either layout."""
    out: list[tuple[str, str]] = []
    if isinstance(args, dict):
        keys = [f"gen_args_{i}" for i in range(len(args))]
        if all(k in args for k in keys):  # the usual layout, already in order
            for key in keys:
                a = args[key]
                if not (isinstance(a, dict) and isinstance(a.get("arg_1"), str)):
                    return None
                out.append((str(a.get("arg_0", "")), a["arg_1"]))
            return out or None

        def order(k: str) -> int:
            tail = k.rsplit("_", 1)[-1]
            return int(tail) if tail.isdigit() else 10**9
        for key in sorted(args, key=order):
            a = args[key]
            if isinstance(a, dict) and isinstance(a.get("arg_1"), str):
                out.append((str(a.get("arg_0", "")), a["arg_1"]))
            else:
                return None
        return out or None
    if isinstance(args, list):
        for a in args:
            if isinstance(a, (list, tuple)) and len(a) >= 2 and isinstance(a[1], str):
                out.append((str(a[0]), a[1]))
            else:
                return None
        return out or None
    return None


def _agrees(s: _Sample, gold: list[int]) -> bool:
    """Whether a gold reading reproduces every per-sample score lm-eval stored."""
    lls = np.asarray(s.lls)
    preds = {"acc": int(np.argmax(lls))}
    if s.lens_char is not None:
        preds["acc_norm"] = int(np.argmax(lls / np.asarray(s.lens_char)))
    checked = [(preds[m] in gold) == (v >= 0.5) for m, v in s.stored.items() if m in preds]
    return bool(checked) and all(checked)


def _gold(target: Any, choices: list[str] | None, k: int, *, as_text: bool = False) -> list[int] | str:
    """Gold indices by lm-eval's rules, or a message saying why there are none.

    ``as_text`` reads a digit string as a choice text instead of an index.
    """
    if target is None:
        return "no target"
    if isinstance(target, str):
        t = target.strip()
        if t.isdigit() and not as_text:
            target = int(t)
        elif t.startswith("[") and t.endswith("]"):
            # a bracketed string that is not a literal list is a choice text
            with contextlib.suppress(ValueError, SyntaxError):
                target = ast.literal_eval(t)
    items = target if isinstance(target, list) else [target]
    out: list[int] = []
    for it in items:
        if isinstance(it, bool):
            return f"target {target!r} is not an index or a choice text"
        if isinstance(it, str) and it.strip().isdigit() and isinstance(target, list):
            it = int(it.strip())
        if isinstance(it, int):
            if not 0 <= it < k:
                return f"target index {it} is outside the {k} choices (0-{k - 1})"
            out.append(it)
        elif isinstance(it, str):
            if choices is None:
                return f"target {it!r} is a text but the sample has no choice texts to match it to"
            cands = [it, it.strip()]
            hit = next((choices.index(c) for c in cands if c in choices), None)
            if hit is None:
                stripped = [c.strip() for c in choices]
                hit = stripped.index(it.strip()) if it.strip() in stripped else None
            if hit is None:
                return f"target {it[:60]!r} is not one of the choices"
            out.append(hit)
        else:
            return f"target {target!r} is not an index or a choice text"
    if not out:
        return "empty target list"
    return out


# --------------------------------------------------------------------------- folders
def read_folder(files: list[tuple[str, bytes]], *, name: str, options: LoadOptions) -> Dataset:
    """Read an lm-eval output folder (one samples file per task) as one dataset.

    The task is the group (the 57 MMLU subjects become 57 groups). ``results_*.json``
    files are not samples: they are skipped, named in the notes, and used for each
    task's ``target_delimiter`` and to check the recomputed accuracy against lm-eval's
    aggregate. Other files are skipped and named. When one task has several samples
    files (several runs in one folder), the newest (by the date in the name) is read.
    With several tasks an item id is ``<task>/<doc_id>`` (doc ids repeat across tasks).
    A samples file that cannot be read at all (a generation task, say) is skipped and
    named in the notes, unless ``options.strict``.
    """
    options = options or LoadOptions()
    notes: list[str] = []
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
    configs: dict[str, Any] = {}
    aggregates: dict[str, Any] = {}
    for _, obj in sorted(results):
        configs.update(obj.get("configs") or {})
        aggregates.update(obj.get("results") or {})

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
    if aggregates:
        head.append(_aggregate_check(parts, reports, aggregates, options.variant))
    # per-task notes other than the ones summarised above (filters, multiple targets...)
    rest = [n for r in reports for n in r.notes[4:]]
    report = merge_reports(reports, source=name, fmt="lmeval")
    report = replace(report, notes=tuple(dict.fromkeys(head + notes + rest)))
    rows, report = clusters.infer(rows, report, options)  # repeated task/doc_id: intervals resample docs
    return Dataset(name, from_judgments(rows), report, rows)


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
    )
