"""The example notebook (docs/notebook.ipynb) runs top to bottom and shows what it says.

Executed with nbclient on an ipykernel in a scratch folder (the figure it saves lands
there); the audit card, the verdict, the fit and the recommendation must be in the
outputs, with no error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


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
