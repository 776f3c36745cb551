"""The plan's design: inclusion probabilities by enumeration, the review queue (inclusion 1), the
plan file as label records, and the clusters' design effect; each against its definition by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats

from calib.labels.plan import interleave
from calib.labels.records import Label, read_labels
from calib.traffic.certify import certify
from calib.traffic.estimate import design_effects, estimate
from calib.traffic.plan import plan, plan_to_csv, plan_to_jsonl, read_plan, strata
from calib.traffic.read import Traffic, join_labels


def _traffic(values: list[float], top: float = 100.0, cluster: list[str] | None = None) -> Traffic:
    n = len(values)
    return Traffic("t", np.array([f"i{k}" for k in range(n)], dtype=object), np.asarray(values, float), top,
                   cluster=None if cluster is None else np.asarray(cluster, dtype=object))


def _label(item: str, correct: bool, k: int, kind: str = "audit") -> Label:
    return Label(item, correct, reviewer="a", time=f"2026-12-01T10:{k // 60:02d}:{k % 60:02d}Z", kind=kind)


def test_every_sample_of_the_design_is_equally_likely_by_enumeration() -> None:
    tr = _traffic([70.0] * 3 + [90.0] * 3)
    first = plan(tr, None, 4, seed=0)
    # the design: 2 of 3 in each stratum, all C(3,2)^2 = 9 samples equally likely
    samples = [frozenset(a) | frozenset(b) for a in itertools.combinations(["i0", "i1", "i2"], 2)
               for b in itertools.combinations(["i3", "i4", "i5"], 2)]
    for item, p in zip(first.ids, first.inclusion, strict=True):
        assert math.isclose(p, sum(item in s for s in samples) / len(samples))
    reps = 900
    seen = [frozenset(plan(tr, None, 4, seed=s).ids) for s in range(reps)]
    counts = [seen.count(s) for s in samples]
    assert sum(counts) == reps
    assert stats.chisquare(counts).pvalue > 0.001


def test_review_queue_items_have_inclusion_one_and_are_interleaved() -> None:
    rng = np.random.default_rng(3)
    values = list(rng.uniform(0, 100, size=400).round(1))
    tr = _traffic(values)
    t = 61.3
    lab = join_labels(tr, [_label("i0", True, 0, "queue")])
    p = plan(tr, lab, 20, seed=4, queue_below=t)
    st = strata(tr, t)
    # no stratum holds items on both sides of the review threshold
    for h in range(len(st)):
        side = np.asarray(values)[st.of == h] >= t
        assert side.all() or not side.any()
    stated = dict(zip(tr.keys, values, strict=True))
    queue = [i for i, r in zip(p.ids, p.reasons(), strict=True) if r == "queue"]
    audit = [i for i, r in zip(p.ids, p.reasons(), strict=True) if r == "audit"]
    want_queue = sorted((k for k, v in stated.items() if v < t and k != "i0"), key=lambda k: (stated[k], int(k[1:])))
    assert queue == want_queue and len(audit) == 20
    assert all(stated[i] >= t for i in audit)
    assert list(p.ids) == list(interleave(tuple(queue), tuple(audit)))
    assert all(pi == 1.0 for pi, r in zip(p.inclusion, p.reasons(), strict=True) if r == "queue")
    assert {it["kind"] for it in p.items() if it["reason"] == "queue"} == {"queue"}


def test_queue_labels_count_exactly_and_audit_labels_by_horvitz_thompson() -> None:
    # 10 items at 40 (the queue, below 50, all reviewed: 3 wrong), 30 at 90 with 6 audit labels (1 wrong)
    tr = _traffic([40.0] * 10 + [90.0] * 30)
    labels = [_label(f"i{k}", k >= 3, k, "queue") for k in range(10)]
    labels += [_label(f"i{10 + k}", k != 0, 20 + k) for k in range(6)]
    out = estimate(join_labels(tr, labels), threshold=50, queue_below=50)
    acc = out["accuracy"]
    ht = (7 + 30 * 5 / 6) / 40
    q = (5 + 1) / (6 + 2)  # the smoothed share of the module's variance
    se = math.sqrt(30**2 * (1 - 6 / 30) * q * (1 - q) * 6 / 5 / 6) / 40  # the queue stratum adds nothing
    alt = acc if acc["method"] == "stratified Horvitz-Thompson" else acc["alternative"]
    assert math.isclose(alt["estimate"], ht) and math.isclose(alt["se"], se)


def test_a_partly_reviewed_queue_stratum_bounds_nothing_until_it_is_done() -> None:
    tr = _traffic([40.0] * 5 + [95.0] * 40)
    audit = [_label(f"i{5 + k}", True, 10 + k) for k in range(40)]
    part = [_label(f"i{k}", True, k, "queue") for k in range(4)]
    c = certify(join_labels(tr, part + audit), 0.3, 0.9, queue_below=50)
    assert c.candidates[0]["bound"] >= 5 / 45  # the queue stratum still counts as all wrong
    full = certify(join_labels(tr, [*part, _label("i4", False, 4, "queue"), *audit]), 0.3, 0.9, queue_below=50)
    upper95 = full.candidates[1]["bound"]
    assert math.isclose(full.candidates[0]["bound"], (5 * 0.2 + 40 * upper95) / 45, rel_tol=1e-9)


def test_plan_file_round_trips_and_becomes_labels_when_filled_in() -> None:
    tr = Traffic("t", np.array(["=cmd()", "b", "c", "d", "'e", "f"], dtype=object),
                 np.array([90.0, 90.0, 50.0, 60.0, 95.0, 95.0]), 100.0)
    p = plan(tr, None, 4, seed=1, queue_below=80)  # every accepted item drawn, the two below 80 queued
    assert read_plan(plan_to_jsonl(p), "p.jsonl") == p.items()
    text = plan_to_csv(p).decode()
    assert read_plan(text.encode(), "p.csv") == p.items()
    assert "\"'=cmd()\"" in text and "\"''e\"" in text  # spreadsheet-safe, undone on reading
    filled = text.replace('"","",""', '"false","ann","2026-12-01T10:00:00Z"')
    labels, _ = read_labels(filled.encode(), "filled.csv")
    assert [lab.item for lab in labels] == list(p.ids)
    assert [lab.kind for lab in labels] == [it["kind"] for it in p.items()]
    assert join_labels(tr, labels).summary()["labels_by_kind"] == {"audit": 4, "queue": 2}


def test_design_effect_is_the_sandwich_over_the_iid_variance_by_hand() -> None:
    z = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    cluster = np.array(["a", "a", "b", "b", "c", "d"])
    deff = design_effects(np.zeros(6, dtype=int), z, cluster, 1)
    e = [1 - 0.5 + 1 - 0.5, -0.5 - 0.5, 0.5, -0.5]  # cluster sums of z - mean
    robust = 4 / 3 * sum(x * x for x in e) / 36
    iid = np.var(z, ddof=1) / 6
    assert math.isclose(deff[0], max(1.0, robust / iid))
    assert design_effects(np.zeros(6, dtype=int), z, np.array(list("abcdef")), 1)[0] == 1.0


def test_clusters_never_narrow_the_interval() -> None:
    rng = np.random.default_rng(8)
    n = 300
    cl = [f"c{k // 5}" for k in range(n)]
    values = list(rng.choice([70.0, 90.0], size=n))
    rows = rng.permutation(n)[:80]
    right = {k: bool(rng.random() < 0.8) for k in range(0, n, 5)}
    labels = [_label(f"i{i}", right[i - i % 5], j) for j, i in enumerate(rows)]
    plain = estimate(join_labels(_traffic(values), labels), threshold=80)
    clustered = estimate(join_labels(_traffic(values, cluster=cl), labels), threshold=80)
    for key in ("accuracy", "error_accepted"):
        assert clustered[key]["se"] >= plain[key]["se"] - 1e-15
        assert plain[key]["estimate"] == clustered[key]["estimate"] or plain[key]["method"] != clustered[key]["method"]
