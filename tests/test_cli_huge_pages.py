"""The command line asks numpy not to use transparent huge pages (issue 29; why and the
figures: :func:`calib.cli.main.no_huge_pages`, ``bench/bench_speed.py``), a user's own
``NUMPY_MADVISE_HUGEPAGE`` wins, and importing calib as a library leaves numpy's default.

Each check runs a fresh interpreter and asks numpy what it decided at import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "judge_b_synthetic.jsonl"
ASK = "import numpy\nprint(numpy._core.multiarray._get_madvise_hugepage())"
AUDIT = ("import io, contextlib\nfrom calib.cli.main import main\n"
         f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['audit', {str(SAMPLE)!r}, '--json'])\n")


def _huge_pages(code: str, setting: str | None = None) -> bool:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if setting is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = setting
    out = subprocess.run([sys.executable, "-c", code + ASK], capture_output=True, text=True, cwd=ROOT, env=env,
                         check=True).stdout
    return {"True": True, "False": False}[out.splitlines()[-1]]


def test_a_command_runs_without_huge_pages() -> None:
    assert _huge_pages(AUDIT) is False


def test_a_users_own_setting_wins() -> None:
    assert _huge_pages(AUDIT, "1") is True


def test_importing_calib_keeps_numpys_default() -> None:
    # numpy's default depends on the kernel: compared with a bare interpreter's
    assert _huge_pages("import calib.cli.main, calib.audit\n") is _huge_pages("")
