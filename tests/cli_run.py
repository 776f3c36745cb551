"""Running the CLI in-process from tests: its exit code and output, and strict JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from calib.cli import main


def strict(text: str) -> Any:
    """Parse JSON, failing on NaN / Infinity (the CLI promises strict JSON)."""
    def bad(c: str) -> Any:
        raise AssertionError(f"non-strict JSON constant {c}")

    return json.loads(text, parse_constant=bad)


def run(args: list[Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``calib ARGS`` run in this process."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(args: list[Any], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The strict JSON ``calib ARGS --json`` prints (it must exit 0)."""
    code, out, err = run([*args, "--json"], capsys)
    assert code == 0, err
    return strict(out)
