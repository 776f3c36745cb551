"""Every reader returns what docs/ARCHITECTURE.md and calib/readers/__init__.py say it does:
a row reader (every format :func:`calib.loading.load` dispatches on but ``counts``, and an
lm-eval folder) ``(Judgments, LoadReport)``; the count-table reader a ``CountTable``; the
glob reader a ``Dataset`` (its rows are reduced in SQL and never exist in memory)."""

from __future__ import annotations

import typing
from pathlib import Path

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.loading import FORMATS, _reader, sniff_format
from calib.loadreport import LoadReport
from calib.readers.base import LoadOptions
from calib.readers.counts import read_counts
from calib.readers.lmeval import read_folder
from calib.readers.source import read_source
from calib.readers.warehouse import load_glob
from calib.rows import Judgments
from calib.table import CountTable

DATA = Path(__file__).parent / "data"
ROWS = tuple[Judgments, LoadReport]


def test_every_row_reader_is_declared_to_return_rows_and_report() -> None:
    for kind in FORMATS:
        if kind == "counts":
            continue
        assert typing.get_type_hints(_reader(kind))["return"] == ROWS, kind
    assert typing.get_type_hints(read_folder)["return"] == ROWS
    assert typing.get_type_hints(read_counts)["return"] is CountTable
    assert typing.get_type_hints(load_glob)["return"] is Dataset


def test_every_row_reader_returns_rows_and_report_on_its_fixture(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text('{"confidence": 80, "correct": true}\n{"confidence": 30, "correct": false}\n')
    (tmp_path / "l.jsonl").write_text('{"logprobs": [-0.1, -2.5], "gold": 0}\n{"logprobs": [-1.2, -0.4], "gold": 0}\n')
    files = [p for p in DATA.rglob("*") if p.is_file() and "bad" not in p.parts and "sources" not in p.parts
             and p.suffix in (".json", ".jsonl", ".eval", ".parquet", ".gz")
             and not p.name.startswith(("tool_reading", "results_", "stats.json"))]
    seen = set()
    for p in [*files, tmp_path / "s.jsonl", tmp_path / "l.jsonl"]:
        src = read_source(p, None, LoadOptions())
        kind = sniff_format(src.name, src.data)
        try:
            got = _reader(kind)(src, LoadOptions())
        except CalibError:  # a fixture that needs an option (Inspect's builtin scorer: no confidence)
            continue
        assert isinstance(got, tuple) and len(got) == 2, p
        assert isinstance(got[0], Judgments) and isinstance(got[1], LoadReport), p
        seen.add(kind)
    assert seen == set(FORMATS) - {"counts"}  # every row format read at least once


def test_the_folder_count_table_and_glob_readers_return_their_stated_types(tmp_path: Path) -> None:
    lmeval = DATA / "lm-eval-0.4.13-dummy"
    folder = read_folder([(str(p), p.read_bytes()) for p in sorted(lmeval.iterdir())], name="x",
                         options=LoadOptions())
    assert isinstance(folder[0], Judgments) and isinstance(folder[1], LoadReport)
    (tmp_path / "t.csv").write_text("value,n,correct\n80,10,8\n30,10,3\n")
    assert isinstance(read_counts(tmp_path / "t.csv"), CountTable)
    for i in range(2):
        (tmp_path / f"g{i}.jsonl").write_text('{"confidence": 80, "correct": true}\n{"confidence": 30, "correct": false}\n')
    assert isinstance(load_glob(str(tmp_path / "g*.jsonl")), Dataset)


def test_the_map_and_the_package_say_what_each_reader_returns() -> None:
    """The map said every reader returns (Judgments, LoadReport) while the glob reader
    returns a Dataset: the readers' row and the package docstring name all three types."""
    import calib.readers

    doc = (Path(__file__).parents[1] / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| `readers/` |"))
    for text in (row, calib.readers.__doc__ or ""):
        assert "(Judgments, LoadReport)" in text and "CountTable" in text and "Dataset" in text, text
