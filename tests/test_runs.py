"""calib.runs (issue 23): one Settings value, unpacked once into the engine's arguments.

Each run is checked against the engine function called directly with the arguments the
faces used to pass one by one (the composition they did by hand), and the dashboard's
cache key against a threshold move."""

from __future__ import annotations

import argparse
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest

from calib.hosting import view as views
from calib.loading import load
from calib.runs.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "judge_b_synthetic.jsonl"


def test_settings_are_frozen_hashable_and_only_keeps_what_a_result_reads() -> None:
    s = Settings(reps=50, seed=3, lo=70.0, cost_review=1.0)
    assert hash(s) == hash(Settings(reps=50, seed=3, lo=70.0, cost_review=1.0))
    with pytest.raises(FrozenInstanceError):
        s.reps = 1  # type: ignore[misc]
    part = s.only("reps", "seed")
    assert part == Settings(reps=50, seed=3)  # the threshold and the cost back at their defaults
    with pytest.raises(ValueError, match="no setting 'nope'"):
        s.only("nope")
    assert Settings(target=None).target_error == 0.05 and Settings(target=0.1).target_error == 0.1
    assert Settings(scheme="corp").ece_scheme == "auto" and Settings(scheme="mass").ece_scheme == "mass"


def test_a_threshold_move_keeps_the_audit_and_decision_cache_keys() -> None:
    """The dashboard caches by (data key, settings.only(...)): moving the review threshold
    leaves the audit's and the decision's keys equal; a change of reps does not."""
    pytest.importorskip("streamlit")
    from calib.runs.audit import AUDIT_FIELDS
    from dashboard.results import DECISION_FIELDS, settings_of

    v = views.View(reps=100)
    moved = replace(v, lo=60.0, hi=95.0)
    for names in (AUDIT_FIELDS, DECISION_FIELDS):
        assert settings_of(v).only(*names) == settings_of(moved).only(*names)
        assert settings_of(v).only(*names) != settings_of(replace(v, reps=200)).only(*names)
    # the view's 0 and 0 mean "no costs given": the engine gets None for each
    assert (settings_of(v).cost_review, settings_of(v).cost_miss) == (None, None)
    assert settings_of(replace(v, cost_review=1.0)).cost_miss == 0.0


def test_runs_audit_and_decide_are_the_engine_with_the_settings() -> None:
    from calib.audit import audit as engine_audit
    from calib.decision import decide as engine_decide
    from calib.runs.audit import audit
    from calib.runs.decide import decide

    ds = load(str(SAMPLE))
    s = Settings(reps=40, seed=7, level=0.9, scheme="width", bins=8, target=0.1, confidence=0.9, cost_review=1.0,
                 cost_miss=5.0, capacity="20%")
    direct = engine_audit(ds.table, scheme="width", bins=8, reps=40, seed=7, level=0.9, name=ds.name,
                          load_report=ds.report)
    assert audit(ds, s).to_dict() == direct.to_dict()
    d = engine_decide(ds, target=0.1, confidence=0.9, cost_review=1.0, cost_miss=5.0, capacity_share=0.2, reps=40,
                      seed=7, level=0.9)
    assert decide(ds, s).to_dict() == d.to_dict()


def test_the_cli_flags_make_one_settings() -> None:
    from calib.cli.args import run_settings

    args = argparse.Namespace(level=0.9, reps=10, seed=None, scheme="auto", bins=12, target_error=None,
                              confidence=0.8, cost_review=None, cost_miss=2.0, by="subject", simultaneous=False)
    s = run_settings(args)
    assert s == Settings(level=0.9, reps=10, seed=None, bins=12, hist_bins=12, confidence=0.8, cost_miss=2.0,
                         by_group=True)


def test_the_audit_on_reviewers_labels_is_composed_once() -> None:
    """runs.labels.with_labels: the labelled items' outcomes replaced, the agreement and the
    accepted error at the default review threshold, as the engine's three calls give them."""
    from calib.labels import Label, accepted_error, agreement, item_keys, with_human_outcomes
    from calib.runs.labels import with_labels

    ds = load(str(SAMPLE))
    assert ds.rows is not None
    labels = [Label(item=str(i), correct=bool(k % 3), reviewer="r1", time="2026-01-01T00:00:00Z")
              for k, i in enumerate(item_keys(ds.rows)[:30])]
    run = with_labels(ds, labels, Settings(reps=30, seed=1))
    rows, outcomes = with_human_outcomes(ds.rows, labels)
    assert run.outcomes.to_dict() == outcomes.to_dict() and outcomes.to_dict()["changed"] > 0
    assert (run.dataset.rows.correct == rows.correct).all()  # type: ignore[union-attr]
    assert run.dataset.table.total == ds.table.total
    assert run.threshold == pytest.approx(80.0)  # 0.8 on the 0-100 scale: the default review threshold
    assert run.agreement.to_dict() == agreement(ds.rows, labels, reps=30, seed=1, level=0.95).to_dict()
    assert run.accepted_error.to_dict() == accepted_error(ds.rows, labels, 80.0, level=0.95).to_dict()
