"""A named cluster field (``--cluster-key``) is read in the reader's one pass over the input.

Before, :func:`calib.clusters.infer` parsed every kept line of a JSONL source a second time
to read the field. Here: the number of JSON parses is the same with and without the key,
and the clusters found are those written in the file, grouped by hand in the test (each
kept row's line parsed here, the dotted path walked, the value's ``str``; a row without
a value is its own cluster), for the stated (per-line and pyarrow paths), log-prob and
lm-eval readers, and an lm-eval folder of two files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from calib.clusters import infer
from calib.loading import load
from calib.readers import stated
from calib.readers.base import LoadOptions, Source

LMEVAL = Path(__file__).parent / "data" / "lm-eval-0.4.13-dummy"


def _by_hand(text: str, lines: list[int], key: str) -> set[frozenset[int]]:
    """The clusters of the kept rows (their 1-based line numbers): rows sharing the ``str``
    of field ``key`` (a dotted path) on their line; a row without one, alone."""
    groups: dict[str, set[int]] = {}
    alone = []
    raw = text.splitlines()
    for no in lines:
        v: Any = json.loads(raw[no - 1])
        for part in key.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if v is None or isinstance(v, dict | list):
            alone.append(frozenset({no}))
        else:
            groups.setdefault(str(v), set()).add(no)
    return {frozenset(g) for g in groups.values()} | set(alone)


def _found(rows: Any) -> set[frozenset[int]]:
    """The clusters of loaded rows as sets of line numbers."""
    groups: dict[str, set[int]] = {}
    for lab, no in zip(rows.cluster.tolist(), rows.line.tolist(), strict=True):
        groups.setdefault(str(lab), set()).add(int(no))
    return {frozenset(g) for g in groups.values()}


def _stated_text() -> str:
    lines = [
        {"id": "a1", "confidence": 90, "correct": True, "meta": {"doc": "d1"}},
        {"id": "a2", "confidence": 80, "correct": False, "meta": {"doc": "d1"}},
        {"id": "a3", "confidence": 70, "correct": True, "meta": {"doc": 7}},
        {"id": "a4", "confidence": 60, "correct": True, "meta": {"doc": 7}},
        {"id": "a5", "confidence": 50, "correct": False, "meta": {"doc": "7"}},  # "7" is 7's str: one cluster
        {"id": "a6", "confidence": 40, "correct": True, "meta": {}},  # no value: its own cluster
        {"id": "a7", "confidence": 30, "correct": False, "meta": {"doc": None}},  # null: its own
        {"id": "a8", "confidence": 20, "correct": True, "meta": {"doc": {"x": 1}}},  # an object: its own
        {"id": "bad", "correct": True, "meta": {"doc": "d1"}},  # no confidence: dropped, not clustered
        {"id": "a9", "confidence": 10, "correct": False, "meta": {"doc": True}},
        {"id": "a10", "confidence": 15, "correct": True, "meta": {"doc": True}},
    ]
    return "\n".join(json.dumps(o) for o in lines) + "\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every ``json.loads`` call (each reader's and the old second pass's parser)."""
    count = [0]
    real = json.loads

    def counting(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    return count


def _parses_of(path: Path, parses: list[int], **kw: Any) -> tuple[int, Any]:
    before = parses[0]
    ds = load(path, options=LoadOptions(**kw))
    return parses[0] - before, ds


def test_stated_reads_the_cluster_field_in_its_one_pass(tmp_path: Path, parses: list[int]) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(_stated_text())
    plain, _ = _parses_of(p, parses)
    named, ds = _parses_of(p, parses, cluster_key="meta.doc")
    assert named == plain  # the old second pass parsed the 10 kept lines again: plain + 10
    want = _by_hand(p.read_text(), ds.rows.line.tolist(), "meta.doc")
    assert _found(ds.rows) == want
    # by hand: {d1: 1, 2}, {7: 3, 4, 5}, {True: 10, 11}, and lines 6, 7, 8 alone
    assert want == {frozenset({1, 2}), frozenset({3, 4, 5}), frozenset({10, 11}),
                    frozenset({6}), frozenset({7}), frozenset({8})}
    assert any("field 'meta.doc': 6 clusters of 10 rows" in n and "3 row(s) without a value" in n
               for n in ds.report.notes)


def test_stated_fast_path_reads_the_same_clusters(tmp_path: Path) -> None:
    """The pyarrow path (string cluster values; a number among them goes line by line)
    and the per-line path give the same clusters as the file by hand."""
    objs = [{"confidence": 50 + i % 50, "correct": i % 3 == 0, "doc": f"d{i % 7}"} for i in range(3000)]
    objs[5]["doc"] = 12  # another JSON type than the schema's: read line by line
    objs[6]["doc"] = 12
    del objs[7]["doc"]
    text = "\n".join(json.dumps(o) for o in objs) + "\n"
    src = Source("f.jsonl", text.encode())
    opts = LoadOptions(cluster_key="doc")
    want = None
    for fast in (False, True):
        rows, report = stated.read(src, opts, fast=fast)
        rows, report = infer(rows, report, opts)
        want = want or _by_hand(text, rows.line.tolist(), "doc")
        assert _found(rows) == want
    assert len(want) == 7 + 1 + 1  # d0..d6, the two 12s, line 8 alone


def test_logprobs_reads_the_cluster_field_in_its_one_pass(tmp_path: Path, parses: list[int]) -> None:
    objs = [{"id": f"i{i}", "logprobs": [-0.2 - 0.1 * i, -2.0, -3.0], "gold": i % 3, "item": {"passage": i // 3}}
            for i in range(12)]
    objs[4]["item"] = {}
    p = tmp_path / "lp.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    plain, _ = _parses_of(p, parses)
    named, ds = _parses_of(p, parses, cluster_key="item.passage")
    assert ds.report.format == "logprobs" and named == plain
    assert _found(ds.rows) == _by_hand(p.read_text(), ds.rows.line.tolist(), "item.passage")
    # passages 0..3 (line 5, of passage 1, has none) and line 5 alone
    assert len(_found(ds.rows)) == 5


def test_lmeval_reads_the_cluster_field_in_its_one_pass(parses: list[int]) -> None:
    path = next(LMEVAL.glob("samples_calib_mc_letters_*.jsonl"))
    plain, _ = _parses_of(path, parses)
    named, ds = _parses_of(path, parses, cluster_key="doc.subject")
    assert ds.report.format == "lmeval" and named == plain
    want = _by_hand(path.read_text(), ds.rows.line.tolist(), "doc.subject")
    assert _found(ds.rows) == want and 1 < len(want) < len(ds.rows)


def test_lmeval_folder_keeps_each_file_s_cluster_field() -> None:
    """A folder of two tasks: the field read by each file's reader, carried through; rows
    of both files sharing a subject are one cluster."""
    ds = load(LMEVAL, options=LoadOptions(cluster_key="doc.subject"))
    subjects: dict[str, set[tuple[str, int]]] = {}
    for path in sorted(LMEVAL.glob("samples_*.jsonl")):
        for no, line in enumerate(path.read_text().splitlines(), start=1):
            subjects.setdefault(json.loads(line)["doc"]["subject"], set()).add((path.name, no))
    assert ds.rows.cluster is not None
    assert len(set(ds.rows.cluster.tolist())) == len(subjects)
    assert any(f"{len(subjects):,} clusters of {len(ds.rows):,} rows" in n for n in ds.report.notes)


def test_a_key_no_row_has_and_the_id_field_keep_their_messages(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(_stated_text())
    with pytest.raises(Exception, match="no row has the field 'nope'"):
        load(p, options=LoadOptions(cluster_key="nope"))
    ds = load(p, options=LoadOptions(cluster_key="id"))  # the id field: clusters by item id
    assert len(set(ds.rows.cluster.tolist())) == len(ds.rows)
    assert any("item id (id)" in n for n in ds.report.notes)
