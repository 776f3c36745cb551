"""``calib.plan``, ``calib.estimate``, ``calib.certify``: the Python API gives the CLI's JSON."""

from __future__ import annotations

import json

import calib
from calib.cli.main import main
from calib.labels.records import Label


def test_api_matches_the_cli(tmp_path, capsys) -> None:
    tr = tmp_path / "t.jsonl"
    tr.write_text("".join(json.dumps({"id": f"i{k}", "confidence": 95 if k < 300 else 60}) + "\n"
                          for k in range(400)))
    labels = [Label(f"i{k}", k % 7 != 0, reviewer="a", time=f"2026-12-01T10:{k // 60:02d}:{k % 60:02d}Z") for k in range(0, 400, 8)]
    lab = tmp_path / "l.jsonl"
    lab.write_text("".join(json.dumps(x.to_dict()) + "\n" for x in labels))
    p = calib.plan(str(tr), labels, budget=5, seed=3)
    assert main(["plan", str(tr), "--labels", str(lab), "--budget", "5", "--seed", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == p["items"]
    e = calib.estimate(tr.read_bytes(), str(lab), threshold=90)
    main(["estimate", str(tr), "--labels", str(lab), "--threshold", "90", "--json"])
    cli = json.loads(capsys.readouterr().out)
    assert cli["error_accepted"]["estimate"] == e["error_accepted"]["estimate"]
    c = calib.certify(str(tr), labels, target_error=0.2)
    main(["certify", str(tr), "--labels", str(lab), "--target-error", "0.2", "--json"])
    assert json.loads(capsys.readouterr().out)["bound"] == c["bound"]
