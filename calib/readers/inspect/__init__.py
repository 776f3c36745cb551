"""Reader for Inspect AI evaluation logs: ``.eval`` archives and ``.json`` logs.

The package: :mod:`.archive` opens a log (zip members under the caps, or one JSON
object), :mod:`.samples` reads what one sample says; :func:`read` here turns the
samples into rows, one record per usable sample.

Layout (read from logs written by inspect_ai 0.3.180 and 0.3.285):

- ``.eval`` is a zip: ``header.json`` (eval spec, plan, results, status),
  ``samples/<id>_epoch_<n>.json`` (one file per sample and epoch),
  ``summaries.json``, ``reductions.json`` and ``_journal/`` (``start.json`` holds
  the eval spec of a run that has not finished). Inspect >= 0.3.2xx compresses the
  members with zstd (zip method 93), which Python's ``zipfile`` reads only from
  3.14: those members are decompressed here with the ``zstandard`` package; older
  logs use deflate, read by ``zipfile``. No member, and not the archive as a whole,
  may decompress to more than ``options.max_decompressed_bytes`` (a zip bomb is
  refused); sizes and CRCs are checked.
- ``.json`` is one object: ``{"version", "status", "eval", "plan", "results",
  "samples": [...], "reductions"}``.

Per sample (``samples[i]``): ``id``, ``epoch``, ``target``, ``output.completion``,
``output.choices[0].logprobs.content[t]`` (token, logprob, top_logprobs) and
``scores[<scorer>]`` with ``value``, ``answer``, ``metadata``.

Outcome
    The score value of the first scorer (``options.outcome_key`` names another, or
    ``scorer.key`` for scorers returning a dict): ``"C"`` right, ``"I"``/``"N"`` wrong,
    booleans, 0/1, ``"correct"``/``"incorrect"``. Partial credit (``"P"``, 0.5) is
    not a binary outcome and is reported.
Stated confidence (the default), first found of
    ``options.confidence_key`` (a dotted path in the score, then the sample); the
    score's metadata (``confidence``, ``stated_confidence``, ``conf``, ``certainty``,
    ``probability``); the sample's metadata and store; a JSON object with such a key
    in the completion text; ``confidence: 85%`` or ``85% confident`` in the text.
    What the model wrote (the completion's text and JSON) is read per sample by its
    written form (:func:`written_form`): ``95%`` is 0.95, ``0.6`` (a decimal from 0 to
    1: ``.6``, ``1.0``, ``0.0``, a JSON float) a probability, and an integer (``65``,
    ``1``, ``0``) or a decimal above 1 a bare number, on the scale detected from the
    log's bare numbers (65 is 0.65 when they are on 0-100; ``1`` is then 1%, but a
    probability 1 when every bare number is 0 or 1). Metadata values are bare numbers
    (a scorer may store 65.0). The forms are counted in ``report.forms`` and a note;
    see :func:`calib.scale.read_scale`.
Answer-letter probability
    With ``confidence_key="logprob"`` the confidence of every sample is
    ``exp(logprob)`` of the token that spells the answer letter (the parsed answer;
    the token after "answer" in a JSON reply, else the last matching token), a
    probability on 0-1. ``confidence_key="stated|logprob"`` uses the stated
    confidence and falls back to it per sample. Token probability and stated
    confidence are different quantities, so they are mixed only when asked.

Bad samples
    An unreadable member (corrupt, cut off, not valid JSON: ``unreadable sample``), a
    sample whose fields have the wrong JSON type (``"scores": [...]``, ``"output":
    "text"``: ``malformed sample``, :func:`_malformed`) or with a score value that is
    not right/wrong is one bad sample, named by its id and member, and every other
    sample is kept. The header, the archive as a whole and the decompression limits
    stay file-level: such a log is refused.

A log with outcomes but no stated confidence at all (Inspect's ``choice()`` scorer)
raises :class:`~calib.errors.CalibError` saying so and how to get one; the error
carries the load report (every sample as "no confidence") as ``exc.report``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.inspect.archive import _SAMPLE_MEMBER, Unreadable, _open_eval, _open_json
from calib.readers.inspect.samples import (
    LOGPROB,
    LOGPROB_SCALE,
    STATED_THEN_LOGPROB,
    _h,
    _header_accuracy,
    _input_text,
    _malformed,
    _pick_scorer,
    answer_logprob,
    answer_of,
    completion_text,
    outcome_of,
    stated_confidence,
)
from calib.readers.jsonl import as_number, cluster_how, cluster_key, cluster_label, get_or, short_text
from calib.rows import Judgments
from calib.scale import AMBIGUOUS, FORM_NUMBER, OUTSIDE, Scale, ScaleReading, onto_ends, read_scale
from calib.scale import OK as SCALE_OK

__all__ = ["LOGPROB", "STATED_THEN_LOGPROB", "read"]

@dataclass
class _Kept:
    """One usable sample: where it is, what it says, how it was read."""

    pos: int
    sid: str
    epoch: int
    conf: float
    form: int
    correct: bool
    group: str
    text: str
    where: str
    cluster: str | None = None

    @property
    def from_logprob(self) -> bool:
        return self.where.startswith("answer-letter")


@dataclass
class _Tally:
    """What is counted over the samples read: outcomes, scorers, where confidences came from."""

    outcomes: list[bool] = field(default_factory=list)
    scorer_used: Counter[str] = field(default_factory=Counter)
    where_count: Counter[str] = field(default_factory=Counter)
    no_conf_ids: list[str] = field(default_factory=list)
    with_logprob: int = 0


@dataclass(frozen=True)
class _Ctx:
    """How the samples of one log are read."""

    name: str
    options: LoadOptions
    issues: IssueCollector
    mode: str  # "stated", LOGPROB or STATED_THEN_LOGPROB
    key: str | None  # the confidence key, when stated
    default_scorer: str | None
    cluster_key: str | None  # --cluster-key: a sample field whose value groups dependent samples


def read(source: Source, options: LoadOptions) -> Read:
    """Read an Inspect AI ``.eval`` or ``.json`` log into judgments."""
    is_zip = source.data[:4] == b"PK\x03\x04" or source.name.lower().endswith(".eval")
    if not source.data.strip():
        raise CalibError(f"{source.name}: the file is empty")
    header, samples, n_samples, kind = _open_eval(source, options) if is_zip else _open_json(source, options)
    ctx = _context(source.name, header, options)
    kept, tally, n = _collect(samples, ctx)
    notes = _header_notes(header, kind, n_samples, tally, traffic=options.traffic)
    group_key = options.group_key
    fields = {"outcome": f"scores.{tally.scorer_used.most_common(1)[0][0]}.value" if tally.scorer_used else None,
              "confidence": ", ".join(f"{w} ({k})" for w, k in tally.where_count.most_common()) or None,
              "id": "id", "group": group_key or ("metadata.subject" if any(k.group for k in kept) else None)}
    if not kept:
        err = _no_confidence(source.name, ctx, tally)
        err.report = _report(source, n, ctx.issues, fields, None, notes)  # type: ignore[attr-defined]
        raise err
    values, scale, reading, keep = _on_scale(kept, ctx, notes)
    rows = _rows(kept, values, keep, scale, ctx.cluster_key)
    notes += _confidence_notes(kept, tally, ctx)
    if rows.group is not None:
        notes.append(f"group: {fields['group']}")
    return rows, _report(source, n, ctx.issues, fields, scale, notes, kept=len(rows), reading=reading)


def _context(name: str, header: dict[str, Any], options: LoadOptions) -> _Ctx:
    mode = "stated"
    key = options.confidence_key
    if key in (LOGPROB, STATED_THEN_LOGPROB):
        mode, key = key, None
    scorers = get_or(header, "eval.scorers")
    scorer_names = [s.get("name") for s in (scorers if isinstance(scorers, list) else []) if isinstance(s, dict)]
    ckey = cluster_key(options)
    return _Ctx(name=name, options=options, issues=IssueCollector(name, options.strict), mode=mode, key=key,
                default_scorer=scorer_names[0] if scorer_names else None, cluster_key=ckey)


def _collect(samples: Iterator[tuple[str, Any]], ctx: _Ctx) -> tuple[list[_Kept], _Tally, int]:
    """Every usable sample, the tally over all of them, and how many samples there were."""
    kept: list[_Kept] = []
    tally = _Tally()
    n = 0
    for n, (member, sample) in enumerate(samples, start=1):
        if n > ctx.options.max_rows:
            raise CalibError(f"{ctx.name}: more than {ctx.options.max_rows:,} samples; refused")
        row = _sample_row(n, member, sample, ctx, tally)
        if row is not None:
            kept.append(row)
    return kept, tally, n


def _checked(n: int, member: str, sample: Any, ctx: _Ctx) -> str | None:
    """The sample's id when it is a readable, well-formed sample without an error; else
    ``None`` (the bad sample is reported)."""
    issues, options = ctx.issues, ctx.options
    if isinstance(sample, Unreadable):
        sid = m.group("id") if (m := _SAMPLE_MEMBER.match(member)) else None
        issues.bad(n, None, "unreadable sample", sample.why, sample_id=sid)
        return None
    if not isinstance(sample, dict):
        issues.bad(n, None, "not a sample", f"{member} is not a JSON object")
        return None
    problem = _malformed(sample)
    if problem:
        sid = sample.get("id")
        issues.bad(n, None, "malformed sample", f"{member}: {problem}",
                   sample_id=str(sid) if isinstance(sid, str | int) else None)
        return None
    sid = str(sample.get("id", member) if not options.id_key else get_or(sample, options.id_key, member))
    if sample.get("error"):
        err = sample["error"].get("message") if isinstance(sample["error"], dict) else sample["error"]
        issues.bad(n, None, "sample error", f"the sample failed: {short_text(err)[:120]}", sample_id=sid)
        return None
    return sid


def _outcome(n: int, sample: dict[str, Any], sid: str, ctx: _Ctx) -> tuple[bool, str, dict[str, Any]] | None:
    """``(right, scorer, score)`` of a sample, or ``None`` (reported) when it has no binary outcome."""
    issues, options = ctx.issues, ctx.options
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict) or not scores:
        issues.bad(n, "scores", "not scored", "the sample has no score", sample_id=sid)
        return None
    name, sub = _pick_scorer(scores, options.outcome_key, ctx.default_scorer)
    if name is None:
        issues.bad(n, "scores", "not scored", f"no score from scorer {options.outcome_key!r}", sample_id=sid)
        return None
    score = scores[name] if isinstance(scores[name], dict) else {"value": scores[name]}
    value = score.get("value")
    if sub is not None:
        value = value.get(sub) if isinstance(value, dict) else None
    elif isinstance(value, dict):
        issues.bad(n, f"scores.{name}.value", "outcome not binary",
                   f"scorer {name!r} returned several values ({', '.join(map(str, value))}); "
                   f"name one with outcome_key='{name}.<key>'", sample_id=sid)
        return None
    ok = outcome_of(value)
    if ok is None:
        issues.bad(n, f"scores.{name}.value", "outcome not binary",
                   f"score value {value!r} is not right/wrong (C/I, true/false, 1/0)", sample_id=sid)
        return None
    return ok, name, score


def _unscored(sample: dict[str, Any], ctx: _Ctx) -> tuple[bool, str, dict[str, Any]]:
    """Traffic: no outcome read (``False``, a placeholder); the scorer's score, when there is
    one, is still where a stated confidence may be kept (its metadata)."""
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        return False, "", {}
    name, _ = _pick_scorer(scores, ctx.options.outcome_key, ctx.default_scorer)
    score = scores.get(name) if name is not None else None
    return False, name or "", score if isinstance(score, dict) else {}


def _sample_row(n: int, member: str, sample: Any, ctx: _Ctx, tally: _Tally) -> _Kept | None:
    """One sample as a row, or ``None`` when it is a bad sample (reported) or has no confidence."""
    sid = _checked(n, member, sample, ctx)
    if sid is None:
        return None
    scored = _unscored(sample, ctx) if ctx.options.traffic else _outcome(n, sample, sid, ctx)
    if scored is None:
        return None
    ok, name, score = scored
    if not ctx.options.traffic:
        tally.outcomes.append(ok)
        tally.scorer_used[name] += 1
    text = completion_text(sample)
    lp = answer_logprob(sample, answer_of(score, text))
    tally.with_logprob += lp is not None
    c: float | None = None
    form = FORM_NUMBER
    if ctx.mode in ("stated", STATED_THEN_LOGPROB):
        c, form, where, unparseable = stated_confidence(sample, score, text, ctx.key)
        if c is None and unparseable is not None and ctx.mode == "stated":
            ctx.issues.bad(n, "confidence", "confidence not a number",
                           f"stated confidence {unparseable!r} ({where}) is not a number", sample_id=sid,
                           preview=text)
            return None
    if c is None and ctx.mode in (LOGPROB, STATED_THEN_LOGPROB) and lp is not None:
        c, where = math.exp(lp), "answer-letter token exp(logprob)"
    if c is None:
        tally.no_conf_ids.append(sid)
        looked = ("the answer letter's token logprob (output.choices[0].logprobs)" if ctx.mode == LOGPROB else
                  "score metadata, sample metadata/store and the completion text")
        ctx.issues.bad(n, "confidence", "no confidence",
                       f"no confidence found (looked in {looked}); completion: {short_text(text)[:80]!r}",
                       sample_id=sid, preview=text)
        return None
    tally.where_count[where] += 1
    return _kept(n, sid, sample, c, form, ok, where, ctx)


def _kept(n: int, sid: str, sample: dict[str, Any], c: float, form: int, ok: bool, where: str,
          ctx: _Ctx) -> _Kept:
    """The row of a usable sample: its epoch, group, question text and cluster value."""
    cluster = None if ctx.cluster_key is None else cluster_label(get_or(sample, ctx.cluster_key))
    ep = as_number(sample.get("epoch"))
    g = get_or(sample, ctx.options.group_key or "metadata.subject")
    return _Kept(
        pos=n, sid=sid, epoch=int(ep) if ep is not None and math.isfinite(ep) else 1, conf=c, form=form,
        correct=ok, group="" if g is None else str(g), text=short_text(_input_text(sample)), where=where,
        cluster=cluster,
    )


def _header_notes(header: dict[str, Any], kind: str, n_samples: int, tally: _Tally, *,
                  traffic: bool = False) -> list[str]:
    """The run (task, model, status) and the outcome's scorer, checked against the log's accuracy."""
    task = str(get_or(header, "eval.task", "?"))
    status = str(header.get("status", "?"))
    notes = [f"Inspect AI log ({kind}): task {task!r}, model {_h(header, 'eval.model')}, "
             f"inspect_ai {_h(header, 'eval.packages.inspect_ai')}, status {status}, {n_samples} sample(s)"]
    if status not in ("success", "?"):
        notes.append(f"the run's status is {status!r}: the log may not hold every sample")
    if traffic:
        notes.append("outcome: not read (traffic: outcomes come from the reviewers' labels)")
    if tally.scorer_used:
        outcomes = tally.outcomes
        s_name = tally.scorer_used.most_common(1)[0][0]
        notes.append(f"outcome: scorer {s_name!r} value (C / true / 1 = right; I / N / false / 0 = wrong); "
                     f"right on {sum(outcomes):,} of {len(outcomes):,} scored samples")
        acc_h = _header_accuracy(header, s_name)
        if acc_h is not None and outcomes:
            mine = sum(outcomes) / len(outcomes)
            same = "equals" if abs(mine - acc_h) < 1e-9 else "DIFFERS from"
            notes.append(f"accuracy over scored samples {mine:.4f} {same} the log's own accuracy {acc_h:.4f}")
    return notes


def _no_confidence(name: str, ctx: _Ctx, tally: _Tally) -> CalibError:
    """The refusal of a log without a usable sample: outcomes but no confidence, and how to get one."""
    if not (tally.outcomes and tally.no_conf_ids):
        issues = ctx.issues
        first = issues.log.issues()[0].message() if issues.log.kept else "the log has no samples"
        return CalibError(f"{name}: no usable sample; first problem: {first}")
    head = (f"{name}: the log has outcomes for {len(tally.outcomes):,} scored samples (scorer "
            f"{tally.scorer_used.most_common(1)[0][0]!r}) but no confidence")
    how = ('To get a stated confidence, ask the model for one (e.g. reply {"answer": "B", '
           '"confidence": 85}) and have the scorer keep it, Score(..., metadata={"confidence": 85}); '
           "for token probabilities, generate with GenerateConfig(logprobs=True, top_logprobs=5).")
    if ctx.mode == LOGPROB:
        return CalibError(f"{head}: no sample has a token log-probability for its answer letter "
                          f"({_ids(tally.no_conf_ids)}). {how}")
    hint = (f" Its samples carry the answer letter's token log-probability ({tally.with_logprob} of "
            f"{len(tally.outcomes)}): load with confidence_key='{LOGPROB}' (command line: "
            f"--confidence-key {LOGPROB}) to use exp(logprob) as the confidence."
            if tally.with_logprob and ctx.mode == "stated" else "")
    return CalibError(f"{head}: no sample states one ({_ids(tally.no_conf_ids)}).{hint} {how}")


def _on_scale(kept: list[_Kept], ctx: _Ctx, notes: list[str],
              ) -> tuple[np.ndarray, Scale, ScaleReading | None, np.ndarray]:
    """The confidences on their scale, the scale, its reading (``None`` for token
    probabilities) and which rows are on it (the others are reported)."""
    values = np.asarray([k.conf for k in kept], dtype=np.float64)
    lp_rows = np.asarray([k.from_logprob for k in kept], dtype=bool)
    reading = None
    raw = values
    if ctx.mode == LOGPROB or lp_rows.all():
        # token probabilities are probabilities: no scale to detect or override
        scale = LOGPROB_SCALE
        values, _ = onto_ends(values, scale)
        bad = np.where(scale.contains(values), SCALE_OK, OUTSIDE)
    else:
        # each stated value by its written form ("95%", "0.6", "65"), bare numbers by the bulk rule
        st = ~lp_rows
        forms = np.asarray([k.form for k in kept], dtype=np.int8)
        try:
            reading = read_scale(values[st], forms[st], given=ctx.options.rescale, mixed=ctx.options.mixed_scales)
        except CalibError as exc:
            raise CalibError(f"{ctx.name}: {exc}") from None
        scale = reading.scale
        values = values.copy()
        values[st] = reading.stated
        # fallback rows hold probabilities; put them on the stated scale of the others
        values[lp_rows] = scale.to_stated(raw[lp_rows])
        bad = np.full(values.size, SCALE_OK, dtype=np.int8)
        bad[st] = reading.bad
        bad[lp_rows] = np.where(scale.contains(values[lp_rows]), SCALE_OK, OUTSIDE)
        notes.extend(reading.notes)
        notes.extend(f"warning: {w}" for w in reading.warnings)
    keep = bad == SCALE_OK
    st_index = np.cumsum(~lp_rows) - 1  # position among the stated rows, for reading.why
    for i in np.flatnonzero(~keep):
        if reading is not None and not lp_rows[i]:
            why, shown = reading.why(int(st_index[i]), float(raw[i])), raw[i]
        else:
            why, shown = f"is outside the {scale.name} scale [{scale.lo:g}, {scale.hi:g}]", values[i]
        ctx.issues.bad(kept[i].pos, "confidence", "ambiguous scale" if bad[i] == AMBIGUOUS else "outside the scale",
                       f"confidence {shown:.12g} {why}", sample_id=kept[i].sid)
    if not keep.any():
        raise CalibError(f"{ctx.name}: no usable sample; first problem: {ctx.issues.log.issues()[0].message()}")
    return values, scale, reading, keep


def _rows(kept: list[_Kept], values: np.ndarray, keep: np.ndarray, scale: Scale, ckey: str | None) -> Judgments:
    """The rows on the scale; several epochs make ``id#epoch`` items clustered by sample."""
    multi_epoch = max(k.epoch for k in kept) > 1
    sel = np.flatnonzero(keep)
    ids = [k.sid for k in kept]
    item = [f"{k.sid}#{k.epoch}" if multi_epoch else k.sid for k in kept]
    groups = [k.group for k in kept]
    stated = values[sel]
    return Judgments(
        stated=stated,
        prob=scale.to_prob(stated),
        correct=np.asarray([k.correct for k in kept], dtype=bool)[sel],
        line=np.asarray([k.pos for k in kept], dtype=np.int64)[sel],
        item_id=np.asarray(item, dtype=str)[sel],
        scale=scale,
        group=np.asarray(groups, dtype=str)[sel] if any(groups) else None,
        options=None,
        text=np.asarray([k.text for k in kept], dtype=str)[sel],
        # epochs of one sample are dependent: the sample is the cluster (calib.clusters)
        cluster=(np.asarray([k.cluster for k in kept], dtype=object)[sel] if ckey
                 else np.asarray(ids, dtype=object)[sel] if multi_epoch else None),
        cluster_how=cluster_how(ckey) if ckey else "Inspect epochs: sample id" if multi_epoch else "",
    )


def _confidence_notes(kept: list[_Kept], tally: _Tally, ctx: _Ctx) -> list[str]:
    """Where the confidences came from, the samples without one, the epochs."""
    notes: list[str] = []
    if ctx.mode == LOGPROB:
        notes.append("confidence: exp(logprob) of the token spelling the answer letter (a token probability, "
                     "not a stated confidence), on 0-1")
    else:
        notes.append("confidence: " + "; ".join(f"{w} on {k:,} sample(s)" for w, k in tally.where_count.most_common()))
        if tally.with_logprob and ctx.mode == "stated":
            notes.append(f"{tally.with_logprob:,} sample(s) also carry the answer letter's token logprob; "
                         f"confidence_key='{LOGPROB}' audits exp(logprob) instead")
    if tally.no_conf_ids:
        notes.append(f"no confidence on {len(tally.no_conf_ids):,} sample(s): {_ids(tally.no_conf_ids)}")
    epochs = max(k.epoch for k in kept)
    if epochs > 1:
        notes.append("several epochs: one row per sample and epoch (item id 'id#epoch')")
        if ctx.options.cluster_key is None:
            notes.append(f"{epochs} epochs of {len({k.sid for k in kept}):,} samples: intervals resample samples "
                         "(the epochs of a sample are one cluster); --cluster-key none treats rows as independent")
    return notes


def _report(source: Source, n: int, issues: IssueCollector, fields: dict[str, str | None],
            scale: Scale | None, notes: list[str], kept: int = 0, reading: ScaleReading | None = None) -> LoadReport:
    return LoadReport(
        source=source.name, format="inspect", lines_read=n, blank=0, kept=kept, dropped=issues.dropped,
        dropped_by_reason=dict(issues.log.counts), issues=issues.log.issues(), fields=fields,
        scale=None if scale is None else scale.to_dict(), notes=tuple(notes),
        forms={} if reading is None else dict(reading.forms),
        warnings=() if reading is None else reading.warnings,
    )


def _ids(ids: list[str], k: int = 8) -> str:
    if not ids:
        return "none"
    head = ", ".join(ids[:k])
    return f"samples {head}{f' and {len(ids) - k} more' if len(ids) > k else ''}"
