"""One lm-eval sample line: its log-likelihoods, choice texts and lengths, and its gold by
lm-eval's rules."""

from __future__ import annotations

import ast
import contextlib
import json
from typing import Any

import numpy as np

from calib.options import MAX_OPTIONS, R_TOO_MANY_OPTIONS, too_many_options
from calib.readers.base import IssueCollector
from calib.readers.jsonl import as_number, short_text

#: Fields of ``doc`` holding the question text shown in the review queue.
QUESTION_KEYS = ("question", "query", "ctx", "goal", "sentence", "text", "premise")


class _Sample:
    __slots__ = ("line", "doc_id", "lls", "lens_char", "lens_byte", "gold", "stored", "text", "filter", "multi",
                 "text_target", "cluster")

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
        self.cluster: str | None = None  # --cluster-key's value (calib.readers.jsonl.cluster_label)


def _parse_sample(no: int, obj: dict[str, Any], delim: str, issues: IssueCollector, *,
                  traffic: bool = False) -> _Sample | None:
    """One samples line as a :class:`_Sample`, or ``None`` (reported) when it is not a
    multiple-choice sample: its log-likelihoods, choice texts and lengths, gold and text.
    ``traffic``: the target is not read (gold ``[-1]``, no option: a placeholder)."""
    s = _Sample()
    s.line = no
    did = obj.get("doc_id")
    s.doc_id = "" if did is None else str(did)
    sid = s.doc_id or None
    s.filter = str(obj.get("filter", "none"))
    lls = _log_likelihoods(no, obj, issues, sid)
    if lls is None:
        return None
    args = _continuations(obj.get("arguments"))
    metrics = obj.get("metrics") or []
    if "acc_mutual_info" in metrics and len(lls) % 2 == 0 and len(lls) >= 4:
        # the second half holds the unconditional log-likelihoods (lm-eval's mutual-info layout)
        lls = lls[: len(lls) // 2]
        if args is not None:
            args = args[: len(lls)]
    if len(lls) > MAX_OPTIONS:  # every row is padded to the widest: refused before that
        issues.bad(no, "filtered_resps", R_TOO_MANY_OPTIONS, too_many_options("filtered_resps", len(lls)),
                   sample_id=sid)
        return None
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
    if args is not None and len(args) != len(lls):
        issues.bad(no, "arguments", "choices and scores differ",
                   f"{len(args)} choice texts but {len(lls)} log-likelihoods", sample_id=sid)
        return None
    choices = _choices(s, obj, args, delim)
    for name in ("acc", "acc_norm"):
        v = as_number(obj.get(name))
        if v is not None:
            s.stored[name] = v
    gold = [-1] if traffic else _sample_gold(s, obj.get("target"), choices)
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


def _log_likelihoods(no: int, obj: dict[str, Any], issues: IssueCollector, sid: str | None) -> list[float] | None:
    """The per-choice log-likelihoods of ``filtered_resps`` (or ``resps``), or ``None`` (reported)."""
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
    return lls


def _choices(s: _Sample, obj: dict[str, Any], args: list[tuple[str, str]] | None, delim: str) -> list[str] | None:
    """The choice texts without the target delimiter (from the arguments, else
    ``doc.choices``); sets the sample's lengths (per character and byte) and ``multi``."""
    if args is None:
        doc_choices = (obj.get("doc") or {}).get("choices") if isinstance(obj.get("doc"), dict) else None
        if isinstance(doc_choices, list) and len(doc_choices) == len(s.lls) and all(
                isinstance(c, str) for c in doc_choices):
            return list(doc_choices)
        return None
    conts = [a[1] for a in args]
    ctxs = [a[0] for a in args]
    choices = [c[len(delim):] if delim and c.startswith(delim) else c for c in conts]
    # winogrande-style tasks vary the context and share the continuation
    s.multi = len(set(conts)) == 1 and len(set(ctxs)) > 1
    lens = [float(len(c)) for c in choices]
    if 0.0 not in lens:
        s.lens_char = lens
        s.lens_byte = [float(len(c.encode("utf-8"))) for c in choices]
    return choices


def _sample_gold(s: _Sample, target: Any, choices: list[str] | None) -> list[int] | str:
    """The sample's gold indices (or why there are none), a digit target read as a choice
    text when only that reading reproduces lm-eval's stored scores."""
    gold = _gold(target, choices, len(s.lls))
    if isinstance(target, str) and target.strip().isdigit() and choices is not None and (
            target in choices or target.strip() in (c.strip() for c in choices)):
        # "7" may be an index or a choice text ("0", "7", "14", "1"): the stringified
        # target cannot tell, lm-eval's own per-sample verdicts can
        alt = _gold(target, choices, len(s.lls), as_text=True)
        if not isinstance(alt, str) and (isinstance(gold, str) or (
                alt != gold and _agrees(s, alt) and not _agrees(s, gold))):
            gold, s.text_target = alt, True
    return gold


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
