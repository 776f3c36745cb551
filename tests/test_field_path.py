"""One resolver of a dotted field path (calib.readers.jsonl.get_path) serves every reader,
the covariate and the review card: a key holding the dot wins, then the path's steps,
a number indexing a list. Each consumer is checked on one object against the value
written in it by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from calib.labels.card import fields_of
from calib.loading import load
from calib.readers import stated
from calib.readers.base import LoadOptions, Source
from calib.readers.covariate import covariate_values
from calib.readers.jsonl import get_or, get_path, is_missing

OBJ = {"a.b": "literal", "a": {"b": "nested"}, "c": [{"d": "first"}, {"d": "second"}], "n": None}


def test_the_resolver_rules() -> None:
    assert get_path(OBJ, "a.b") == "literal"  # a key holding the dot wins
    assert get_path(OBJ, ("a", "b")) == "nested"  # steps: as given
    assert get_path(OBJ, "c.1.d") == "second"  # a number indexes a list
    assert is_missing(get_path(OBJ, "c.2.d")) and is_missing(get_path(OBJ, "a.x"))
    assert get_or(OBJ, "n", "dflt") is None and get_or(OBJ, "zz", "dflt") == "dflt"


def _lines(n: int) -> list[dict]:
    return [{"scores": [40 + i % 50, 3], "correct": i % 3 == 0, "id": f"q{i}",
             "meta": {"tags": [f"t{i % 4}", "x"]}, "doc": {"q": [f"question {i}"]}} for i in range(n)]


def test_the_stated_reader_indexes_a_list_on_both_paths() -> None:
    objs = _lines(3000)
    src = Source("x.jsonl", ("\n".join(json.dumps(o) for o in objs) + "\n").encode())
    for fast in (False, True):
        rows, _ = stated.read(src, LoadOptions(confidence_key="scores.0"), fast=fast)
        assert rows.stated.tolist() == [float(o["scores"][0]) for o in objs]


def test_the_covariate_and_the_card_read_the_same_paths(tmp_path: Path) -> None:
    objs = _lines(20)
    p = tmp_path / "x.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    ds = load(p, options=LoadOptions(confidence_key="scores.0"))
    got = covariate_values(p.read_bytes(), ds.rows, "meta.tags.0", str(p))
    assert got.tolist() == [objs[int(no) - 1]["meta"]["tags"][0] for no in ds.rows.line]
    lit = covariate_values(b'{"a.b": "literal", "a": {"b": "nested"}}\n', ds.rows.take(np.array([True] + [False] * 19)),
                           "a.b", "y")
    assert lit.tolist() == ["literal"]
    assert fields_of(objs[3], {"question": "doc.q.0"})["question"] == "question 3"
