"""Static figures without a browser (:mod:`calib.present.static`, ``--plot out.svg|out.png``).

The browser is taken away (an empty PATH for the browser names, a BROWSER_PATH that
does not exist, kaleido unimportable) and the images must still be written, hold the
diagram's data (the counts per stated value, counted here from the file) and be
refused before any work when the path is unusable.
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import calib
from calib.cli import main
from calib.errors import CalibError

SAMPLES = Path(__file__).resolve().parents[1] / "sample_data"
JUDGE = SAMPLES / "judge_a_synthetic.jsonl"


def _counts(path: Path) -> Counter:
    return Counter(json.loads(line)["confidence"] for line in path.read_text().splitlines() if line.strip())


@pytest.fixture
def no_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-browser"))
    monkeypatch.setitem(sys.modules, "kaleido", None)  # `import kaleido` raises ImportError
    assert not any(shutil.which(n) for n in ("chromium", "google-chrome", "chrome", "chromium-browser"))


def test_plot_svg_without_a_browser(no_browser: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.svg"
    code = main(["audit", str(JUDGE), "--reps", "100", "--plot", str(out)])
    _, err = capsys.readouterr()
    assert code == 0, err
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "Reliability diagram: judge_a_synthetic" in texts
    # each stated value's n (counted here from the rows) labels its point; the total below
    for n in _counts(JUDGE).values():
        assert f"{n:,}" in texts
    assert f"n = {sum(_counts(JUDGE).values()):,}" in texts
    assert any("confidence band (95%, 100 resamples)" in t for t in texts)


def test_plot_png_without_a_browser(no_browser: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.png"
    code = main(["audit", str(JUDGE), "--reps", "50", "--plot", str(out)])
    assert code == 0, capsys.readouterr().err
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 800 and height > 800
    import matplotlib.image

    px = matplotlib.image.imread(out)[..., :3]
    blue = np.abs(px - np.array([0, 114, 178]) / 255).max(axis=2) < 0.05  # the points' colour
    assert blue.sum() > 500


def test_figure_save_from_the_api(no_browser: None, tmp_path: Path) -> None:
    a = calib.audit(str(SAMPLES / "judge_c_synthetic.jsonl"), reps=20, name="a $x$ <b>")
    svg = a.figure().save(tmp_path / "f.svg").read_text()
    assert "Reliability diagram: a $x$ &lt;b&gt;" in svg  # literal: no mathtext, XML-escaped
    assert a.figure().save(tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(CalibError, match="must end in .svg, .png, .pdf"):
        a.figure().save(tmp_path / "f.gif")


@pytest.mark.parametrize("path, message", [("d.pdf", "must end in .html, .png or .svg"),
                                           ("no/such/dir/d.svg", "cannot write the file"),
                                           ("no/such/dir/d.html", "cannot write the file")])
def test_unusable_path_refused_before_any_work(path: str, message: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the file was read before the --plot path was checked")

    monkeypatch.setattr("calib.loading.load", never)
    code = main(["audit", str(JUDGE), "--plot", str(tmp_path / path)])
    _, err = capsys.readouterr()
    assert code == 2 and message in err and "Traceback" not in err


def test_binned_diagram_of_a_continuous_score(no_browser: None, tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    p = rng.beta(5, 2, 3000)
    y = rng.random(3000) < p**1.5
    a = calib.audit(confidence=p, outcome=y, reps=50, name="continuous")
    assert a.scheme == "width"
    root = ET.parse(a.figure().save(tmp_path / "c.svg")).getroot()
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    counts = np.bincount(np.minimum((p * 10).astype(int), 9), minlength=10)  # ten equal-width bins, here
    for n in counts[counts > 0]:
        assert f"{int(n):,}" in texts
    assert "hit rate per bin (Wilson interval; area ~ n)" in texts and "n = 3,000" in texts


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_notebook_display_of_a_judge_right_every_time_at_one_value(seed: int) -> None:
    # issue 22: 14 of 20 such judges (seeds 0-6, 8, 10, 12, 13, 16, 18, 19) raised "'yerr' must
    # not contain negative values": at 100 (all right) the Wilson upper bound came out 1 - 1e-16
    import pandas as pd

    rng = np.random.default_rng(seed)
    v = rng.choice(np.array([50, 60, 70, 80, 90, 100]), 3000)
    y = rng.random(3000) < v / 100
    assert y[v == 100].all()
    html = calib.audit(pd.DataFrame({"confidence": v, "correct": y}), reps=0)._repr_html_()
    assert "<svg" in html and f"{int((v == 100).sum()):,}" in html
