"""HELM per-instance-stats reader, checked on stats written with crfm-helm 0.5.16's own code.

The expected reading comes from HELM's own parse (``tool_reading.json``: ``dacite.from_dict``
of ``PerInstanceStats``) and its aggregate calibration figure (``ece_1_bin``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format

DIR = Path(__file__).parent / "data" / "helm-0.5.16"
FILE = DIR / "per_instance_stats.json"
TOOL = json.loads((DIR / "tool_reading.json").read_text())


def test_the_folder_and_the_file_are_recognised() -> None:
    assert sniff_format(FILE.name, FILE.read_bytes()) == "helm"
    ds = load(DIR)
    assert ds.report.format == "helm" and ds.name == DIR.name


def test_every_instance_and_trial_as_helm_reads_it() -> None:
    ds = load(FILE)
    want = {f"{x['instance_id']}#{x['train_trial_index']}": (x["stats"]["max_prob"], x["stats"]["exact_match"] == 1.0)
            for x in TOOL["instances"] if "max_prob" in x["stats"]}
    got = {str(i): (float(s), bool(c)) for i, s, c in zip(ds.rows.item_id, ds.rows.stated, ds.rows.correct,
                                                           strict=True)}
    assert got == want and len(want) == 43
    r = ds.report
    assert [i.sample_id for i in r.issues] == ["id7#0"]
    # HELM's own ece_1_bin is |mean max_prob - accuracy| over the same rows
    assert abs(float(np.mean(ds.rows.stated)) - float(np.mean(ds.rows.correct))) == pytest.approx(
        TOOL["aggregate"]["ece_1_bin"], abs=1e-12)
    assert float(np.mean(ds.rows.stated)) == pytest.approx(TOOL["aggregate"]["max_prob"], abs=1e-12)


def test_trials_of_an_instance_are_a_cluster() -> None:
    ds = load(FILE)
    assert ds.table.clusters is not None and ds.table.clusters.count == 39


def test_perturbations_are_groups(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    extra = json.loads(json.dumps(doc[:10]))
    for x in extra:
        x["perturbation"] = {"name": "typos", "robustness": True}
    p = tmp_path / "per_instance_stats.json"
    p.write_text(json.dumps(doc + extra))
    ds = load(p)
    groups = ds.rows.group.tolist()
    assert groups.count("typos") == 10 and groups.count("original") == 43


def test_malformed_instances_and_ties(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    doc[0]["stats"] = {"x": 1}
    doc[1] = "text"
    del doc[2]["instance_id"]
    em = next(s for s in doc[3]["stats"] if s["name"]["name"] == "exact_match")
    em["mean"] = 0.5  # a tie between two options
    p = tmp_path / "per_instance_stats.json"
    p.write_text(json.dumps(doc))
    r = load(p).report
    assert r.dropped_by_reason == {"malformed instance": 3, "outcome not binary": 1, "no confidence": 1}


def test_not_a_list_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "per_instance_stats.json"
    p.write_text('{"instance_id": "x", "train_trial_index": 0, "stats": []}')
    with pytest.raises(CalibError, match="not HELM per-instance stats"):
        load(p)
