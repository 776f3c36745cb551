"""tools/check_architecture.py finds each kind of breach on a small made-up tree, passes a
clean one, and passes the real tree (the rules of docs/ARCHITECTURE.md hold)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "check_architecture.py"


def _checker():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("check_architecture", SCRIPT)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    assert spec and spec.loader
    sys.modules["check_architecture"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return tmp_path


def _run(root: Path) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout


CLEAN = {
    "calib/__init__.py": "",
    "calib/table.py": "import numpy as np\n\n\ndef f():\n    return np.zeros(1)\n",
    "calib/audit.py": "from calib.table import f\n\n\ndef g():\n    return f()\n",
    "calib/present/__init__.py": "",
    "calib/present/text.py": "from calib.audit import g\n",
    "dashboard/__init__.py": "import streamlit as st\n\nfrom calib.present import text\n",
    "app.py": "import streamlit as st\n\nimport dashboard\n",
}


def test_clean_tree_passes(tmp_path: Path) -> None:
    code, out = _run(_tree(tmp_path, CLEAN))
    assert code == 0, out
    assert "OK" in out


def test_long_module_and_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(90))
    files = dict(CLEAN)
    files["calib/big.py"] = "\n" * 710
    files["calib/long.py"] = f"def long_one():\n{body}\n    return 0\n"
    files["calib/reasoned.py"] = f"def ok_one():\n    # long: a flat table of ninety settings\n{body}\n    return 0\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "calib/big.py: 711 lines (limit 700)" in out
    assert "function long_one is 92 lines" in out
    assert "ok_one" not in out


def test_cycle_including_function_level_imports(tmp_path: Path) -> None:
    files = dict(CLEAN)
    files["calib/a.py"] = "from calib import b\n"
    files["calib/b.py"] = "def h():\n    from calib.a import x\n    return x\n"
    files["calib/c.py"] = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from calib.d import y\n"
    files["calib/d.py"] = "from calib import c\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "import cycle: calib.a <-> calib.b" in out
    # an import under TYPE_CHECKING never runs: c and d form no cycle
    assert not [line for line in out.splitlines() if "cycle" in line and "calib.c" in line]


def test_streamlit_and_rooms(tmp_path: Path) -> None:
    files = dict(CLEAN)
    files["calib/leak.py"] = "import streamlit\n"
    files["calib/engine.py"] = "from calib.present.text import g\n"
    files["calib/present/host.py"] = "from calib.hosting import store\n"
    files["calib/hosting/__init__.py"] = ""
    files["calib/hosting/store.py"] = "import dashboard\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "calib/leak.py:1: imports Streamlit" in out
    assert "the engine module calib.engine imports the face calib.present.text" in out
    assert "presentation does not depend on hosting" in out
    assert "calib/hosting/store.py:1: imports dashboard: the library never imports the dashboard" in out


def test_relative_imports_resolve(tmp_path: Path) -> None:
    chk = _checker()
    files = dict(CLEAN)
    files["calib/metrics/__init__.py"] = "from .binned import ece\n"
    files["calib/metrics/binned.py"] = "from ..table import f\n\n\ndef ece():\n    return f()\n"
    mods = chk.read_modules(_tree(tmp_path, files))
    _, graph = chk.check_imports(mods, tmp_path)
    assert graph["calib.metrics"] == {"calib.metrics.binned"}
    assert graph["calib.metrics.binned"] == {"calib.table"}


def test_the_real_tree_keeps_the_rules() -> None:
    code, out = _run(ROOT)
    assert code == 0, out


def test_the_map_names_every_room() -> None:
    """docs/ARCHITECTURE.md names every module and package of calib/ and dashboard/ (the
    map is kept true when a room is added), and names no module that is gone."""
    import re

    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = []
    for folder in ("calib", "calib/runs", "dashboard"):
        for p in sorted((ROOT / folder).iterdir()):
            if p.name.startswith("_") or p.name == "__pycache__":
                continue
            name = f"{p.name}/" if p.is_dir() else p.name
            if (p.suffix == ".py" or p.is_dir()) and name not in doc:
                missing.append(f"{folder}/{name}")
    assert missing == [], f"docs/ARCHITECTURE.md does not name {missing}"
    named = set(re.findall(r"`(?:[a-z_]+/)*([a-z_]+\.py)`", doc))
    existing = {p.name for p in ROOT.rglob("*.py") if ".venv" not in p.parts}
    assert named - existing == set(), f"docs/ARCHITECTURE.md names modules that do not exist: {named - existing}"


def test_the_map_s_cells_are_one_line_each() -> None:
    """The map's tables say what each module is in one short line (issue 23): a cell
    saying what a module is holds at most 120 characters, any cell (a room's list of
    names) at most 200; the how lives in the module's docstring."""
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    long_cells = []
    what = False
    for line in doc.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            what = what and line.startswith("|")
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[-1] == "what it is":
            what = True
            continue
        limit = [120 if what and i == len(cells) - 1 else 200 for i in range(len(cells))]
        long_cells += [c[:60] for c, n in zip(cells, limit, strict=True) if len(c) > n]
    assert long_cells == [], f"cells longer than a line: {long_cells}"


def test_a_face_importing_the_engine_is_caught(tmp_path: Path) -> None:
    """Rule 6 (issue 23): a face calls calib.runs and calib.present, never the engine below
    them; a type imported under TYPE_CHECKING is allowed (it never runs)."""
    files = dict(CLEAN)
    files["calib/runs/__init__.py"] = "from calib.audit import g\n"
    files["calib/metrics/__init__.py"] = "def ece():\n    return 0\n"
    files["calib/cli/__init__.py"] = ""
    files["calib/cli/ok.py"] = ("from typing import TYPE_CHECKING\n\nfrom calib import runs\nfrom calib.present import text\n"
                                "\nif TYPE_CHECKING:\n    from calib.metrics import ece\n")
    code, out = _run(_tree(tmp_path, files))
    assert code == 0, out
    files["calib/cli/bad.py"] = "def f():\n    from calib.metrics import ece\n    return ece()\n"
    files["pages/1_Page.py"] = "from calib import audit\n"
    files["calib/present/notebook.py"] = "import calib.audit\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "calib/cli/bad.py:2: the face calib.cli.bad imports the engine module calib.metrics" in out
    assert "pages/1_Page.py:1: the face pages.1_Page imports the engine module calib.audit" in out
    assert "the face calib.present.notebook imports the engine module calib.audit" in out
    assert "calib.cli.ok" not in out and "calib/present/text.py" not in out  # present may read the engine


def test_no_face_is_exempt_the_review_page_included(tmp_path: Path) -> None:
    """The Review page's modules, once allowed their engine imports, are checked as every
    face is: one planted engine import in each is named."""
    files = dict(CLEAN)
    files["calib/labels/__init__.py"] = ""
    files["calib/labels/records.py"] = "def current():\n    return ()\n"
    files["calib/traffic/__init__.py"] = ""
    files["calib/traffic/certify.py"] = "def certify():\n    return 0\n"
    files["dashboard/__init__.py"] = ""
    files["dashboard/review.py"] = "def f():\n    from calib.labels.records import current\n    return current()\n"
    files["dashboard/traffic_view.py"] = "from calib.traffic.certify import certify\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "dashboard/review.py:2: the face dashboard.review imports the engine module calib.labels" in out
    assert "dashboard/traffic_view.py:1: the face dashboard.traffic_view imports the engine module calib.traffic" in out


def test_a_top_level_module_in_no_room_is_named(tmp_path: Path) -> None:
    """A new calib module neither engine nor open would escape the face rule: it is named."""
    files = dict(CLEAN)
    files["calib/newthing.py"] = "def f():\n    return 0\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "calib/newthing.py: calib.newthing is in no room" in out
    del files["calib/newthing.py"]
    code, out = _run(_tree(tmp_path / "clean", files))
    assert code == 0, out
