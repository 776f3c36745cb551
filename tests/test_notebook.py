"""The example notebook (docs/notebook.ipynb) runs top to bottom and shows what it says.

Executed with nbclient on an ipykernel in a scratch folder (the figure it saves lands
there); the audit card, the verdict, the fit and the recommendation must be in the
outputs, with no error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # a Jupyter kernel starts and runs the whole notebook
def test_example_notebook_runs(tmp_path: Path) -> None:
    nb = nbformat.read(ROOT / "docs" / "notebook.ipynb", as_version=4)
    work = tmp_path / "docs"
    work.mkdir()
    shutil.copytree(ROOT / "sample_data", tmp_path / "sample_data")
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "data" in o and "text/html" in o["data"]]
    assert any("Calibration audit: data" in h and "<svg" in h for h in html)  # the audit card with its diagram
    assert any("Review threshold" in h and "cheapest" in h for h in html)  # the decision card
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert text.startswith("1,000 answers, 65.9% right")  # print(a.verdict): sentences, not a tuple
    assert "With 95% confidence, at most 40% of the items accepted unseen are wrong" in text
    assert (work / "reliability.svg").read_text().startswith("<svg")


def test_fit_and_compare_show_a_short_repr_and_an_escaped_card() -> None:
    # issue 22: both printed the dataclass repr (several kilobytes) and had no notebook card
    import numpy as np
    import pandas as pd

    import calib

    rng = np.random.default_rng(3)
    v = rng.choice(np.arange(50.0, 101.0, 10.0), 800)
    y = rng.random(v.size) < 0.2 + 0.7 * v / 100
    df = pd.DataFrame({"confidence": v, "correct": y})
    f = calib.fit(df, "platt", scoring="insample", reps=50)
    brier = float(np.mean((v / 100 - y) ** 2))  # the stated confidence's Brier score, from the rows
    assert len(repr(f)) < 300 and "FitResult(" not in repr(f) and f"Brier {brier:.3f}" in repr(f)
    html = f._repr_html_()
    assert "Recalibration map: platt" in html and f"{brier:.3f}" in html and "<script" not in html
    assert f.method == "platt" and f.to_dict()["n_eval"] == 800  # the engine's result behind it
    evil = "<script>alert(1)</script>"
    c = calib.compare({evil: df, "b": df.assign(confidence=95.0)}, reps=20)
    assert len(repr(c)) < 300 and "ModelRow(" not in repr(c)
    html = c._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "Comparison of 2 models" in html
    assert [r["model"] for r in c.to_dict()["models"]] == [evil, "b"]
