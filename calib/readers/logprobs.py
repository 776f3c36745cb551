"""Reader for option log-prob JSONL: one multiple-choice item per line.

Each line holds per-option scores and the gold option::

    {"id": "q017", "logprobs": [-1.2, -0.3, -2.5, -3.1], "gold": 1}
    {"id": "q018", "option_probs": {"A": 0.1, "B": 0.7, "C": 0.2}, "answer": "B"}

Scores (the first of these fields present, or ``options.confidence_key``):

- log domain: ``logprobs``, ``choice_logprobs``, ``option_logprobs``, ``logits``;
  all values <= 0 are read as log-probabilities, any positive value means
  unnormalised logits (softmax normalises both the same way);
- probabilities: ``probs``, ``option_probs``, ``choice_probs``; rows that do not sum
  to 1 are renormalised over the options (``p_k / sum_j p_j``). A log-domain field
  whose every row lies in [0, 1] and sums to 1 holds probabilities, and is read so.

Scores are a list (columns labelled A, B, C...) or a ``{letter: value}`` dict. The
gold option is ``gold``, ``answer``, ``target`` or ``label`` (or
``options.outcome_key``): a 0-based index or a letter.

Prediction is the argmax, confidence the top softmax probability (Guo et al. 2017;
see :mod:`calib.options`), correctness ``prediction == gold``. Length normalisation
(``options.normalisation``) divides each option's log-probability by its length:
``char`` / ``byte`` need the choice texts (``choices``, ``choice_texts``,
``options`` or ``option_texts``; one leading space, the delimiter between prompt
and continuation, is not counted, as in lm-evaluation-harness' ``acc_norm``),
``token`` needs token counts (``token_counts``, ``choice_lengths``,
``option_token_counts``, ``num_tokens``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.loadreport import LoadReport, preview_of
from calib.options import (
    MAX_OPTIONS,
    R_TOO_MANY_OPTIONS,
    TOP_LABEL_SCALE,
    length_normalise,
    option_label,
    option_letters,
    pad_rows,
    to_judgments,
    too_many_options,
)
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import (
    JsonLines,
    as_number,
    cluster_how,
    cluster_key,
    cluster_label,
    first_key,
    get_path,
    is_missing,
    short_text,
)
from calib.rows import OptionScores
from calib.settings import NORMALISATIONS

LOG_KEYS = ("logprobs", "choice_logprobs", "option_logprobs", "logits")
PROB_KEYS = ("probs", "option_probs", "choice_probs")
GOLD_KEYS = ("gold", "answer", "target", "label")
TEXT_KEYS = ("choices", "choice_texts", "options", "option_texts")
TOKEN_KEYS = ("token_counts", "choice_lengths", "option_token_counts", "num_tokens")
ID_KEYS = ("id", "item_id", "question_id", "doc_id", "qid")
GROUP_KEYS = ("subject", "task", "group", "category")
QUESTION_KEYS = ("question", "prompt", "input", "query")
#: Rows whose probabilities sum this far from 1 are counted as renormalised.
SUM_TOLERANCE = 1e-6


# --------------------------------------------------------------------------- reader
class _Row:
    __slots__ = ("line", "keys", "values", "gold", "lengths", "item_id", "group", "text", "cluster")

    def __init__(self, line: int, keys: list[str] | None, values: list[float], gold: Any,
                 lengths: list[float] | None, item_id: str, group: str, text: str) -> None:
        self.line, self.keys, self.values, self.gold = line, keys, values, gold
        self.lengths, self.item_id, self.group, self.text = lengths, item_id, group, text
        self.cluster: str | None = None


@dataclass(frozen=True)
class _Keys:
    """The fields read, fixed by the first line that has option scores."""

    scores: str
    gold: str | None
    item_id: str | None
    group: str | None
    text: str | None
    lengths: str | None

    def as_fields(self) -> dict[str, str | None]:
        return {"scores": self.scores, "gold": self.gold, "id": self.item_id, "group": self.group,
                "lengths": self.lengths, "text": self.text}


def read(source: Source, options: LoadOptions) -> Read:
    """Read option log-prob JSONL into top-label judgments with their option scores."""
    norm = options.normalisation
    if norm not in NORMALISATIONS:
        raise CalibError(f"unknown normalisation {norm!r}; choose one of {', '.join(NORMALISATIONS)}")
    issues = IssueCollector(source.name, options.strict)
    lines = JsonLines(source, options, issues)
    rows, keys = _parse_lines(lines, options, issues, source.name)
    if keys is None:
        raise CalibError(
            f"{source.name}: no line has option scores; expected one of "
            f"{', '.join(LOG_KEYS + PROB_KEYS)} (or name the field with confidence_key)"
        )
    kind, kind_note = _score_kind(rows, keys.scores, keys.scores in PROB_KEYS)
    letters = _letters(rows)
    _check_width(rows, letters, keys.scores, source.name, options)
    logits_rows, gold, kept, renormalised = _option_rows(rows, kind, letters, keys, issues)
    if not kept:
        reasons = ", ".join(f"{n:,} {k}" for k, n in sorted(issues.log.counts.items())) or "no data lines"
        raise CalibError(f"{source.name}: no usable line ({reasons}); first problem: "
                         + (issues.log.issues()[0].message() if issues.log.kept else "the file is empty"))
    opts = OptionScores(
        logits=pad_rows(logits_rows, len(letters)), gold=np.asarray(gold, dtype=np.int64),
        letters=letters, normalisation=norm,
    )
    rows_out = to_judgments(
        opts,
        line=np.array([r.line for r in kept]),
        item_id=np.array([r.item_id for r in kept], dtype=str),
        group=np.array([r.group for r in kept], dtype=str) if keys.group else None,
        text=np.array([r.text for r in kept], dtype=str) if keys.text else None,
    )
    if (ckey := cluster_key(options, keys.item_id)) is not None:  # read in the one pass (_parse_lines)
        rows_out = dataclasses.replace(rows_out, cluster=np.array([r.cluster for r in kept], dtype=object),
                                       cluster_how=cluster_how(ckey))
    notes = [kind_note] + (["outcome: not read (traffic: outcomes come from the reviewers' labels)"]
                           if options.traffic else [])
    if renormalised:
        notes.append(f"{renormalised:,} row(s) of probabilities did not sum to 1: renormalised over the options")
    notes.append(_norm_note(norm, keys.lengths))
    notes.append("prediction = the option with the highest score (first on ties); "
                 "confidence = its softmax probability over the options (0-1)")
    report = LoadReport(
        source=source.name, format="logprobs", lines_read=lines.lines_read, blank=lines.blank,
        kept=len(kept), dropped=issues.dropped, dropped_by_reason=dict(issues.log.counts),
        issues=issues.log.issues(), fields=keys.as_fields(), scale=TOP_LABEL_SCALE.to_dict(), notes=tuple(notes),
    )
    return rows_out, report


def _parse_lines(lines: JsonLines, options: LoadOptions, issues: IssueCollector,
                 name: str) -> tuple[list[_Row], _Keys | None]:
    """Every line parsed into a row; the keys are fixed by the first line with option scores
    (``None`` when no line has any)."""
    keys: _Keys | None = None
    rows: list[_Row] = []
    ckey: str | None = None
    for no, obj in lines:
        if keys is None:
            keys = _find_keys(obj, options, name)
            ckey = None if keys is None else cluster_key(options, keys.item_id)
            if keys is None:
                issues.bad(no, None, "no option scores",
                           f"no option scores: none of {', '.join(LOG_KEYS + PROB_KEYS)} is present",
                           preview=json.dumps(obj)[:200])
                continue
        row = _parse_row(no, obj, keys.scores, keys.gold, keys.lengths, options.normalisation, issues,
                         traffic=options.traffic)
        if row is None:
            continue
        row.item_id = "" if keys.item_id is None else _as_id(get_path(obj, keys.item_id))
        row.group = "" if keys.group is None else _as_id(get_path(obj, keys.group))
        row.text = "" if keys.text is None else short_text(obj.get(keys.text))
        if ckey is not None:
            row.cluster = cluster_label(get_path(obj, ckey))
        rows.append(row)
    return rows, keys


def _find_keys(obj: dict[str, Any], options: LoadOptions, name: str) -> _Keys | None:
    """The fields of ``obj`` (the options' names first); ``None`` when it has no option scores."""
    score_key = first_key(obj, options.confidence_key, LOG_KEYS + PROB_KEYS)
    if score_key is None:
        return None
    return _Keys(
        scores=score_key, gold=None if options.traffic else first_key(obj, options.outcome_key, GOLD_KEYS),
        item_id=first_key(obj, options.id_key, ID_KEYS), group=first_key(obj, options.group_key, GROUP_KEYS),
        text=first_key(obj, None, QUESTION_KEYS), lengths=_length_key(obj, options.normalisation, name),
    )


def _option_rows(rows: list[_Row], kind: str, letters: tuple[str, ...], keys: _Keys, issues: IssueCollector,
                 ) -> tuple[list[np.ndarray], list[int], list[_Row], int]:
    """Each row's log-domain scores in the columns ``letters`` (length-normalised when
    lengths are read), its gold column, the rows kept and how many were renormalised."""
    col = {letter: j for j, letter in enumerate(letters)}
    logits_rows: list[np.ndarray] = []
    gold: list[int] = []
    kept: list[_Row] = []
    renormalised = 0
    for r in rows:
        vals = np.asarray(r.values, dtype=np.float64)
        if kind == "prob":
            if np.any(vals < 0) or np.any(vals > 1) or not np.all(np.isfinite(vals)):
                bad = next(v for v in vals if not (0 <= v <= 1))
                issues.bad(r.line, keys.scores, "probability outside 0-1",
                           f"option probability {bad:g} is outside 0-1")
                continue
            total = float(vals.sum())
            if total <= 0:
                issues.bad(r.line, keys.scores, "all probabilities zero", "every option probability is 0")
                continue
            if abs(total - 1.0) > SUM_TOLERANCE:
                renormalised += 1
            with np.errstate(divide="ignore"):
                vals = np.log(vals)
        row_keys = r.keys if r.keys is not None else list(letters[: len(vals)])
        full = np.full(len(letters), -np.inf)
        full[[col[k] for k in row_keys]] = vals
        # traffic: no gold read; -1 names no option, so ``correct`` is a False placeholder
        g = -1 if keys.gold is None else _gold_index(r, row_keys, col, keys.gold, issues)
        if g is None:
            continue
        if r.lengths is not None:
            lens = np.full(len(letters), np.nan)
            lens[[col[k] for k in row_keys]] = r.lengths
            full = length_normalise(full, lens)
        logits_rows.append(full)
        gold.append(g)
        kept.append(r)
    return logits_rows, gold, kept, renormalised


def _length_key(obj: dict[str, Any], norm: str, name: str) -> str | None:
    if norm == "none":
        return None
    cands = TOKEN_KEYS if norm == "token" else TEXT_KEYS
    key = first_key(obj, None, cands)
    if key is None:
        what = "token counts" if norm == "token" else "the choice texts"
        raise CalibError(
            f"{name}: normalisation {norm!r} needs {what} per option (a field named "
            f"{' / '.join(cands)}); the first line has none"
        )
    return key


def _parse_row(no: int, obj: dict[str, Any], score_key: str | None, gold_key: str | None,
               len_key: str | None, norm: str, issues: IssueCollector, *, traffic: bool = False) -> _Row | None:
    assert score_key is not None
    raw = get_path(obj, score_key)
    if is_missing(raw) or raw is None:
        issues.bad(no, score_key, "no option scores", f"field {score_key!r} is missing")
        return None
    keys: list[str] | None
    if isinstance(raw, dict):
        keys = [str(k) for k in raw]
        items = list(raw.values())
    elif isinstance(raw, list):
        keys, items = None, raw
    else:
        issues.bad(no, score_key, "scores not a list",
                   f"{score_key!r} must be a list or a {{letter: value}} object, got {type(raw).__name__}")
        return None
    if len(items) < 2:
        issues.bad(no, score_key, "fewer than 2 options", f"{score_key!r} has {len(items)} option(s); need 2 or more")
        return None
    if len(items) > MAX_OPTIONS:
        issues.bad(no, score_key, R_TOO_MANY_OPTIONS, too_many_options(score_key, len(items)))
        return None
    values: list[float] = []
    for j, v in enumerate(items):
        x = as_number(v)
        if x is None or math.isnan(x) or x == math.inf:
            label = keys[j] if keys else option_label(j, len(items))
            issues.bad(no, score_key, "score not a number", f"score of option {label} is {v!r}, not a number")
            return None
        values.append(x)
    if all(math.isinf(x) for x in values):
        issues.bad(no, score_key, "score not a number", "every option score is -inf")
        return None
    if gold_key is None and not traffic:
        issues.bad(no, None, "no gold option", f"no gold option: none of {', '.join(GOLD_KEYS)} is present")
        return None
    gold = None if gold_key is None else get_path(obj, gold_key)
    if not traffic and (is_missing(gold) or gold is None):
        issues.bad(no, gold_key, "no gold option", f"field {gold_key!r} is missing")
        return None
    lengths: list[float] | None = None
    if len_key is not None:
        lengths = _lengths(no, obj.get(len_key), keys, len(values), len_key, norm, issues)
        if lengths is None:
            return None
    return _Row(no, keys, values, gold, lengths, "", "", "")


def _lengths(no: int, raw: Any, keys: list[str] | None, k: int, key: str, norm: str,
             issues: IssueCollector) -> list[float] | None:
    if isinstance(raw, dict) and keys is not None:
        if not all(kk in raw for kk in keys):
            missing = next(kk for kk in keys if kk not in raw)
            issues.bad(no, key, "no option length", f"{key!r} has nothing for option {missing}")
            return None
        items = [raw[kk] for kk in keys]
    elif isinstance(raw, list) and len(raw) == k:
        items = list(raw)
    else:
        issues.bad(no, key, "no option length",
                   f"{key!r} must give one entry per option ({k}), got {preview_of(json.dumps(raw))[:80]}")
        return None
    out: list[float] = []
    for j, v in enumerate(items):
        if norm == "token":
            x = as_number(v)
            if x is None or not x > 0 or math.isinf(x):
                issues.bad(no, key, "bad option length", f"token count of option {j + 1} is {v!r}; need a number > 0")
                return None
            out.append(x)
        else:
            if not isinstance(v, str):
                issues.bad(no, key, "bad option length", f"choice text of option {j + 1} is not a string")
                return None
            t = v[1:] if v.startswith(" ") else v
            n = len(t) if norm == "char" else len(t.encode("utf-8"))
            if n == 0:
                issues.bad(no, key, "empty choice text", f"choice text of option {j + 1} is empty; cannot divide by its length")
                return None
            out.append(float(n))
    return out


def _score_kind(rows: list[_Row], key: str, is_prob_key: bool) -> tuple[str, str]:
    """Decide whether the scores are probabilities or log-domain, and say why."""
    if is_prob_key:
        return "prob", f"scores: field {key!r} read as probabilities"
    if not rows:
        return "log", f"scores: field {key!r} read as log-probabilities"
    as_prob = all(
        all(0.0 <= v <= 1.0 for v in r.values) and abs(sum(r.values) - 1.0) <= SUM_TOLERANCE for r in rows
    )
    if as_prob:
        return "prob", (f"scores: field {key!r} holds probabilities (every row lies in 0-1 and sums to 1), "
                        "so it was read as probabilities, not log-probabilities")
    if all(v <= 0 for r in rows for v in r.values):
        return "log", f"scores: field {key!r} read as log-probabilities (every value <= 0)"
    return "log", (f"scores: field {key!r} read as unnormalised logits (some values > 0); "
                   "the softmax over the options normalises them")


def _letters(rows: list[_Row]) -> tuple[str, ...]:
    """Column labels: A, B... for list scores; the dict keys (sorted when they are all
    single letters, else in order of first appearance) for dict scores."""
    k_list = max((len(r.values) for r in rows if r.keys is None), default=0)
    seen: dict[str, None] = {}
    for r in rows:
        if r.keys is not None:
            for k in r.keys:
                seen.setdefault(k, None)
    base = list(option_letters(k_list)) if k_list else []
    in_base = set(base)
    extra = [k for k in seen if k not in in_base]
    if extra and all(len(k) == 1 and k.isalpha() for k in list(seen) + base):
        return tuple(sorted(set(base) | set(seen)))
    return tuple(base + extra)


def _check_width(rows: list[_Row], letters: tuple[str, ...], key: str, name: str, options: LoadOptions) -> None:
    """Refuse, before the table of rows x option columns is built, more columns than
    :data:`~calib.options.MAX_OPTIONS` (dict rows whose keys differ from row to row) or a
    table over :attr:`LoadOptions.max_parse_bytes` (8 bytes a cell: a few wide rows among
    millions of narrow ones, from a small ``.gz``)."""
    if len(letters) > MAX_OPTIONS:
        raise CalibError(
            f"{name}: the rows name {len(letters):,} different options (the keys of {key!r}), over the "
            f"{MAX_OPTIONS:,} one input may have; each row's options must come from one set of labels"
        )
    cells = len(rows) * len(letters)
    if 8 * cells > options.max_parse_bytes:
        widest = max(rows, key=lambda r: len(r.values))
        raise CalibError(
            f"{name}: {len(rows):,} rows x {len(letters):,} option columns (the widest row is line "
            f"{widest.line:,}) would take {8 * cells / 2**20:,.0f} MB as a table, over the "
            f"{options.max_parse_bytes / 2**20:,.0f} MB allowed (raise CALIB_MAX_PARSE_MB if this file is genuine)"
        )


def _gold_index(r: _Row, row_keys: list[str], col: dict[str, int], gold_key: str | None,
                issues: IssueCollector) -> int | None:
    g = r.gold
    if isinstance(g, bool):
        issues.bad(r.line, gold_key, "bad gold option", f"gold {g!r} is neither an option index nor a letter")
        return None
    if isinstance(g, float) and g.is_integer():
        g = int(g)
    if isinstance(g, str) and g.strip().lstrip("-").isdigit() and g.strip() not in row_keys:
        g = int(g.strip())
    if isinstance(g, int):
        if not 0 <= g < len(row_keys):
            issues.bad(r.line, gold_key, "gold out of range",
                       f"gold index {g} is outside 0-{len(row_keys) - 1} (indices are 0-based)")
            return None
        return col[row_keys[g]]
    if isinstance(g, str):
        s = g.strip()
        for cand in (s, s.upper()):
            if cand in row_keys:
                return col[cand]
        issues.bad(r.line, gold_key, "gold not an option",
                   f"gold {g!r} is not one of the options {', '.join(row_keys)}")
        return None
    issues.bad(r.line, gold_key, "bad gold option", f"gold {g!r} is neither an option index nor a letter")
    return None


def _norm_note(norm: str, key: str | None) -> str:
    if norm == "none":
        return "normalisation: none (raw scores)"
    what = {"char": "characters", "byte": "UTF-8 bytes", "token": "tokens"}[norm]
    extra = " (one leading space, the prompt/continuation delimiter, not counted)" if norm in ("char", "byte") else ""
    return (f"normalisation: {norm} - each option's log-probability divided by the number of {what} "
            f"of its {'text' if norm != 'token' else 'continuation'} (field {key!r}){extra}")


def _as_id(value: Any) -> str:
    if value is None or is_missing(value):
        return ""
    return str(value)
