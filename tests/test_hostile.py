"""The hostile-input corpus (tests/hostile.py) through the command line: every file
gets exit 0 (valid rows kept, the bad ones named) or 2 (refused with a message
naming the line or sample and the reason), never 3 (a crash)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from calib.cli import main
from tests import hostile

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> tuple[int, str]:
    code = main(["audit", str(path), "--reps", "0", *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("case", hostile.CASES, ids=[c.name for c in hostile.CASES])
def test_every_hostile_file_gets_a_message_not_a_crash(
    case: hostile.Case, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / case.name
    path.write_bytes(case.bytes())
    code, text = run(capsys, path)
    assert code == case.exit, text[-2000:]
    low = text.lower()
    for frag in case.says:
        assert frag.lower() in low, f"{frag!r} not in:\n{text[-3000:]}"
    if case.exit == 0:
        m = re.search(r"kept ([\d,]+)", text)
        assert m, text[:2000]
        assert int(m.group(1).replace(",", "")) == case.kept
    else:
        assert text.startswith("calib: ") and "internal error" not in text


def test_zip_slip_names_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "slip.eval"
    path.write_bytes(hostile.eval_zip_slip(0))
    before = set(Path("/tmp").glob("calib_zip_slip*"))
    assert run(capsys, path)[0] == 0
    assert set(Path("/tmp").glob("calib_zip_slip*")) == before


@pytest.mark.parametrize("name", ["lone_surrogates.jsonl", "surrogate_id.eval", "logprobs_numbers.jsonl"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_lone_surrogates_print_in_text_and_json(tmp_path: Path, name: str, fmt: str) -> None:
    """A real process with a UTF-8 stdout: capsys would accept what the terminal refuses."""
    case = hostile.BY_NAME[name]
    path = tmp_path / name
    path.write_bytes(case.bytes())
    flags = ["--json"] if fmt == "json" else []
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "calib", "audit", str(path), "--reps", "0", *flags],
                       capture_output=True, env=env, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    out = r.stdout.decode("utf-8")  # valid UTF-8: no lone surrogate reached the bytes
    if fmt == "json":
        assert json.loads(out)["load_report"]["kept"] == case.kept
    else:
        assert f"kept {case.kept}" in out
