"""Reader for HELM run folders: ``per_instance_stats.json`` (the folder, or the file itself).

Layout (made with crfm-helm 0.5.16's own ``PerInstanceStats`` / ``Stat`` and written as
``helm-run`` writes them): a JSON list, one entry per instance and trial, ``instance_id``,
``train_trial_index``, ``perturbation`` (``name``...) and ``stats[]``: ``name``
(``{"name": "exact_match", "split": "test"}``), ``count``, ``sum``, ``mean``...
HELM's multiple-choice metric writes ``max_prob`` (the softmax probability of the
predicted option over the options' scores) and ``exact_match`` per instance; from them
it computes its calibration figures (``ece_10_bin``, ``ece_1_bin`` in ``stats.json``).

Which is which (the rule is :mod:`calib.readers.verdicts`')
    Each stat is a score named by ``name.name`` and read by its ``mean``. ``max_prob``
    is the confidence (a probability, 0-1); the outcome is ``exact_match`` (or another
    ``*exact_match*`` stat, or any stat ``--outcome-key`` names), 1 right, 0 wrong; a
    fractional exact match (a tie between options) is not binary and is reported. An
    instance without ``max_prob`` (a model that returns no log-probs) is listed as having
    no confidence.
Id, group and cluster
    The item is the instance (``instance_id``, with ``#trial`` when the run has several
    trials); the group is the perturbation's name when some instances are perturbed
    (``original`` for the others); the trials and perturbations of one instance are one
    cluster.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from calib.errors import CalibError
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import get_or, short_text
from calib.readers.verdicts import CODE, JUDGE, OTHER, Item, Platform, Score, finish, load_document

PLATFORM = Platform("helm", "HELM per-instance stats", group_how="perturbation.name",
                    cluster_how="HELM instance (its trials and perturbations)")
CONFIDENCE = "max_prob"


def read(source: Source, options: LoadOptions) -> Read:
    """Read a HELM ``per_instance_stats.json`` into judgments."""
    doc = load_document(source, options, PLATFORM.described)
    if not isinstance(doc, list):
        raise CalibError(f"{source.name}: not HELM per-instance stats (expected a JSON list of instances)")
    issues = IssueCollector(source.name, options.strict)
    trials = any(isinstance(r, dict) and r.get("train_trial_index") not in (0, None) for r in doc)
    perturbed = any(isinstance(r, dict) and isinstance(r.get("perturbation"), dict) for r in doc)
    items = [it for pos, rec in enumerate(doc, start=1) if (it := _item(pos, rec, issues, trials, perturbed))]
    counts = Counter(it.cluster for it in items)
    for it in items:
        if counts[it.cluster] < 2:
            it.cluster = None
    notes = [f"HELM per-instance stats: {len(doc):,} instance(s) and trial(s)"
             + (", several trials" if trials else "") + (", perturbed instances" if perturbed else "")
             + "; confidence: max_prob, HELM's softmax probability of the predicted option"]
    return finish(source, options, PLATFORM, items, issues, notes, len(doc))


def _item(pos: int, rec: Any, issues: IssueCollector, trials: bool, perturbed: bool) -> Item | None:
    if not isinstance(rec, dict):
        issues.bad(pos, None, "malformed instance", f"entry {pos} is not a JSON object")
        return None
    iid = rec.get("instance_id")
    if not isinstance(iid, str | int) or isinstance(iid, bool):
        issues.bad(pos, "instance_id", "malformed instance", "the entry has no instance_id")
        return None
    iid = short_text(iid)[:120]
    stats = rec.get("stats")
    if not isinstance(stats, list):
        issues.bad(pos, "stats", "malformed instance", "stats is missing or not a list", sample_id=iid)
        return None
    scores = []
    for st in stats:
        name = get_or(st, "name.name") if isinstance(st, dict) else None
        if not isinstance(name, str):
            issues.bad(pos, "stats", "malformed instance", "a stat has no name.name", sample_id=iid)
            return None
        kind = JUDGE if name == CONFIDENCE else CODE if "exact_match" in name else OTHER
        scores.append(Score(name, st.get("mean"), kind))
    trial = rec.get("train_trial_index", 0)
    pert = get_or(rec, "perturbation.name")
    shown = f"{iid}#{trial}" if trials else iid
    if perturbed:
        shown += f"@{short_text(pert)[:40] if isinstance(pert, str) else 'original'}"
    return Item(pos=pos, id=shown, scores=scores, raw=rec, cluster=iid,
                group=(short_text(pert)[:60] if isinstance(pert, str) else "original") if perturbed else "")
