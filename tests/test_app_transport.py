"""The Drift page's map transport (issue 28 item 2), driven headless with AppTest: a map
fitted on the old run and checked on the new one. The Brier scores shown are checked
against the rows read with json and the map applied by hand; the advice against the
engine's rule applied to tests recomputed here."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import ROOT, app, ok

SAMPLES = ROOT / "sample_data"
A, C = "judge_a_synthetic.jsonl", "judge_c_synthetic.jsonl"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def drift_page(samples: str, **params: str) -> AppTest:
    at = app()
    at.query_params.update({"sample": samples, "reps": "100", **params})
    at.switch_page("pages/7_Drift.py")
    return ok(at.run())


def rows(name: str) -> tuple[np.ndarray, np.ndarray]:
    recs = [json.loads(x) for x in (SAMPLES / name).read_text().splitlines() if x.strip()]
    return (np.array([float(r["confidence"]) for r in recs]), np.array([float(bool(r["correct"])) for r in recs]))


def table(at: AppTest):  # noqa: ANN201
    from calib.present.transport import NOW

    frames = [d.value for d in at.dataframe if NOW in d.value.columns]
    assert len(frames) == 1
    return frames[0].set_index("Brier score")


def test_without_a_map_the_page_asks_for_one():
    at = drift_page(f"{A},{C}")
    assert any(s.value == "Does the map still hold?" for s in at.subheader)
    assert any(i.value.startswith("Choose a map above") for i in at.info)
    assert at.selectbox(key="drift_method").value == "none"


def test_platt_map_fitted_on_the_old_run_checked_on_the_new():
    from calib import load, maps

    at = drift_page(f"{A},{C}", map="platt")
    assert not at.error, [e.value for e in at.error]
    frame = table(at)
    s, y = rows(C)
    p = s / 100.0
    assert float(frame.loc["stated confidence", "now (the new run)"]) == pytest.approx(np.mean((p - y) ** 2), abs=6e-5)
    assert float(frame.loc["constant base rate", "now (the new run)"]) == pytest.approx(y.mean() * (1 - y.mean()),
                                                                                       abs=6e-5)
    # the map the Recalibration page fits on the old run (odd/even split), applied by hand to the new rows
    cmap = maps.fit(load(str(SAMPLES / A)), "platt", scoring="oddeven", reps=100, seed=0).map
    q = np.clip(cmap.apply(s), 0, 1)
    assert float(frame.loc["mapped probabilities", "now (the new run)"]) == pytest.approx(np.mean((q - y) ** 2),
                                                                                         abs=6e-5)
    assert float(frame.loc["mapped probabilities", "then (held out, when fitted)"]) == pytest.approx(
        cmap.held_out["brier_mapped"], abs=6e-5)
    # judge C is overconfident where A was not: the mapped probabilities still beat the stated ones by far
    # (the gain above), but are they calibrated? the mean gap of the mapped probabilities says no
    gap = float(np.mean(q) - y.mean())
    m = {x.label: x.value for x in at.main.metric}
    assert abs(gap) > 0.05 and m["Map advice"] == "refit"
    assert m["Brier gain of the map now"] == f"{np.mean((p - y) ** 2) - np.mean((q - y) ** 2):+.4f}"
    texts = "\n".join(t.value for t in at.text)
    assert "Refit the map on the new data" in texts and "Map: Platt (logistic), fitted on" in texts


def test_same_judge_keeps_its_map():
    # the old run split in two random halves: one judge, unchanged; the map fitted on one half holds on the
    # other (the sample's lines alternate in kind, so a split by line parity would not be one judge twice)
    lines = [x for x in (SAMPLES / A).read_text().splitlines() if x.strip()]
    order = np.random.default_rng(1).permutation(len(lines))
    lines = [lines[i] for i in order]
    at = app()
    at.query_params.update({"reps": "100", "map": "isotonic"})
    at.switch_page("pages/0_Data.py")
    ok(at.run())
    at.file_uploader[0].set_value([("first.jsonl", "\n".join(lines[:500]).encode(), "application/octet-stream"),
                                   ("second.jsonl", "\n".join(lines[500:]).encode(), "application/octet-stream")])
    ok(at.run())
    at.switch_page("pages/7_Drift.py")
    ok(at.run())
    assert not at.error, [e.value for e in at.error]
    m = {x.label: x.value for x in at.main.metric}
    assert m["Map advice"] == "keep", "\n".join(t.value for t in at.text)


def upload_map(at: AppTest, data: bytes) -> AppTest:
    at.radio(key="drift_map_source").set_value("a saved map file")
    ok(at.run())
    at.get("file_uploader")[-1].set_value(("map.json", data, "application/json"))  # the page's only uploader
    return ok(at.run())


def test_a_saved_map_file_is_checked_on_the_new_run():
    from calib import load, maps
    from calib.maps.transport import transport

    cmap = maps.fit(load(str(SAMPLES / A)), "histogram", scoring="kfold", folds=5, reps=50, seed=3).map
    at = upload_map(drift_page(f"{A},{C}"), cmap.to_json().encode())
    assert not at.error, [e.value for e in at.error]
    frame = table(at)
    s, y = rows(C)
    q = np.clip(cmap.apply(s), 0, 1)
    assert float(frame.loc["mapped probabilities", "now (the new run)"]) == pytest.approx(np.mean((q - y) ** 2),
                                                                                         abs=6e-5)
    assert float(frame.loc["mapped probabilities", "then (held out, when fitted)"]) == pytest.approx(
        cmap.held_out["brier_mapped"], abs=6e-5)
    m = {x.label: x.value for x in at.main.metric}
    assert m["Map advice"] == transport(cmap, load(str(SAMPLES / C))).advice
    assert any(t.value.startswith("Map: histogram binning, the saved map, fitted on") for t in at.text)


def test_a_bad_map_file_is_refused_with_its_reason():
    at = upload_map(drift_page(f"{A},{C}"), b'{"method": "platt", "scale": ')
    assert any("not a calib map: invalid JSON" in e.value.replace("\\", "") for e in at.error), [e.value for e in at.error]
    assert not any(x.label == "Map advice" for x in at.main.metric)


def test_an_oversized_map_file_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch):
    import calib.maps.calibration_map as cm
    from calib.maps import transport as tr

    def never(*_a: object, **_k: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(cm, "read_map", never)
    with pytest.raises(tr.CalibError, match="a map file is at most"):
        tr.read_uploaded_map(b" " * (tr.MAP_FILE_LIMIT + 1))
