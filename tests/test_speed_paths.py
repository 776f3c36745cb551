"""The shortcuts taken for speed on a million rows give what the plain computation gives.

- :func:`calib.clusters.surely_distinct` (the hash check before the exact count of
  repeated ids) never claims "distinct" for values that repeat, against a brute-force
  set, and proves distinctness on distinct ids (exactly, for ids of up to 8 characters);
- :func:`calib.runs.decide.repeated`, which asks it first, says whether an item is judged
  twice as a count of the ids (or clusters) does;
- :attr:`CountTable.p_correct` / ``p_wrong``, computed once and cached, equal the formula
  and cannot be written to;
- the stated reader's rows when every line is kept (no copy) equal the per-line reader's.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from calib.clusters import surely_distinct
from calib.readers import stated
from calib.readers.base import LoadOptions, Source
from calib.rows import Judgments
from calib.scale import PROBABILITY
from calib.table import from_judgments


def _brute_distinct(values: np.ndarray) -> bool:
    ids = [v for v in values.tolist() if v != ""]
    return len(set(ids)) == len(ids)


def test_surely_distinct_never_wrong_against_a_set() -> None:
    rng = np.random.default_rng(7)
    # awkward alphabet: empty, NUL inside and at the start, non-ASCII, astral code points
    alphabet = ["", "a", "b", "ab", "\x00a", "a\x00b", "é", "\U0001f600", "a" * 30]
    proved = 0
    for _ in range(4000):
        m = int(rng.integers(0, 14))
        values = np.array([alphabet[i] for i in rng.integers(0, len(alphabet), m)] + ["z"], dtype=str)
        got = surely_distinct(values)
        truth = _brute_distinct(values)
        assert not got or truth, values
        proved += got
    assert proved > 100  # it does prove distinctness, not only refuse


def test_surely_distinct_on_many_ids_and_views() -> None:
    ids = np.array([f"q{i}" for i in range(200_000)])
    assert surely_distinct(ids)
    assert surely_distinct(ids[::3])  # a strided view
    dup = ids.copy()
    dup[123_456] = dup[7]
    assert not surely_distinct(dup)
    with_empty = ids.copy()
    with_empty[:10] = ""  # "" is no id: ten of them are no repeat
    assert surely_distinct(with_empty)
    assert not surely_distinct(ids.astype(object))  # not proved: the caller counts


def test_surely_distinct_short_ids_exact_in_any_order() -> None:
    """Ids of at most 8 characters below U+0100 are compared exactly (packed in one
    integer): the answer is the brute-force set's, whether the ids come in order, in
    reverse or shuffled (the sort chosen by the number of descents)."""
    rng = np.random.default_rng(11)
    alphabet = ["", "a", "b", "ab", "\x00a", "a\x00b", "é", "ÿ", "abcdefgh", "ÿÿÿÿÿÿÿÿ", "q1", "q10", "q9"]
    for _ in range(3000):
        m = int(rng.integers(1, 12))
        values = np.array([alphabet[i] for i in rng.integers(0, len(alphabet), m)] + ["z"], dtype=str)
        assert surely_distinct(values) == _brute_distinct(values), values
    ids = np.array([f"q{i}" for i in range(50_000)])
    for order in (ids, ids[::-1], ids[rng.permutation(ids.size)]):
        assert surely_distinct(order)
        dup = order.copy()
        dup[40_000] = dup[3]
        assert not surely_distinct(dup)


def _rows(n: int, seed: int, ids: np.ndarray | None = None) -> Judgments:
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.3, 1.0, n), 4)
    y = rng.random(n) < p**1.5
    return Judgments(stated=p, prob=p, correct=y, line=np.arange(1, n + 1),
                     item_id=np.array([f"i{i}" for i in range(n)]) if ids is None else ids, scale=PROBABILITY)


def test_cached_cell_means_equal_the_formula_and_are_read_only() -> None:
    t = from_judgments(_rows(3000, 1))
    # independent computation: mean p of the right / wrong rows of each cell, from the rows
    rows = _rows(3000, 1)
    for c in range(0, t.cells, 37):
        at = rows.stated == t.value[c]
        right, wrong = at & rows.correct, at & ~rows.correct
        want1 = rows.prob[right].mean() if right.any() else t.prob[c]
        want0 = rows.prob[wrong].mean() if wrong.any() else t.prob[c]
        assert t.p_correct[c] == pytest.approx(want1, rel=1e-12)
        assert t.p_wrong[c] == pytest.approx(want0, rel=1e-12)
    assert t.p_correct is t.p_correct  # computed once
    with pytest.raises(ValueError):
        t.p_correct[0] = 0.5
    with pytest.raises(ValueError):
        t.p_wrong[0] = 0.5


@pytest.mark.parametrize("bad_line", [False, True])
def test_reader_rows_equal_the_per_line_reader(bad_line: bool) -> None:
    rng = np.random.default_rng(11)
    lines = [json.dumps({"id": f"q{i}", "p": round(float(rng.uniform(0.2, 1)), 5), "correct": int(rng.random() < 0.7)})
             for i in range(3000)]
    if bad_line:
        lines[17] = '{"id": "x", "p": "high", "correct": 1}'  # dropped: not every line is kept
    src = Source("judge.jsonl", ("\n".join(lines) + "\n").encode())
    fast, _ = stated.read(src, LoadOptions(), fast=True)
    slow, _ = stated.read(src, LoadOptions(), fast=False)
    assert len(fast) == 3000 - bad_line
    for name in ("stated", "prob", "correct", "line", "item_id"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_arrow_buffers_read_as_to_numpy_reads_them() -> None:
    import pyarrow as pa

    from calib.readers.stated.columnar import _filled, _numpy

    rng = np.random.default_rng(5)
    arrays = [pa.array(rng.random(1000) < 0.5), pa.array(rng.normal(size=1000)),
              pa.array(rng.integers(-9, 9, 1000)), pa.array(rng.integers(0, 9, 1000).astype(np.int32)),
              pa.array(np.zeros(0)), pa.array(np.zeros(0, dtype=bool))]
    for a in arrays:
        for part in (a, a.slice(3), a.slice(13, 500), a.slice(7, 0)):
            got, want = _numpy(part), part.to_numpy(zero_copy_only=False)
            assert got.dtype == want.dtype and np.array_equal(got, want)
            assert got.flags.writeable
    with_nulls = pa.array([1.5, None, 2.0])
    with pytest.raises(ValueError):
        _numpy(with_nulls)
    assert _numpy(_filled(with_nulls, 0.0)).tolist() == [1.5, 0.0, 2.0]


def test_a_large_file_is_read_without_importing_pandas(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    lines = [json.dumps({"id": f"q{i}", "p": round(0.3 + 0.6 * (i % 997) / 997, 6), "correct": i % 3 > 0})
             for i in range(12000)]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code = ("import sys; from calib.loading import load; d = load(sys.argv[1]); "
            "assert len(d.rows) == 12000; print('pandas' in sys.modules, 'pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]  # the fast path ran, pandas stayed out


def _brute_repeated(ids: list[str], cluster: list[str] | None) -> bool:
    """Some item twice, counted with a dict: the cluster when there is one, else the id,
    a row without an id being an item of its own."""
    seen: dict[str, int] = {}
    for i, x in enumerate(cluster if cluster is not None else ids):
        key = x if cluster is not None or x != "" else f"row {i}"
        seen[key] = seen.get(key, 0) + 1
    return any(c >= 2 for c in seen.values())


def test_repeated_agrees_with_a_count_of_the_items() -> None:
    from dataclasses import replace

    from calib.runs.decide import repeated

    rng = np.random.default_rng(11)
    alphabet = ["", "q1", "q2", "q10", "é", "\U0001f600", "x" * 12, "\x00a"]
    seen = {True: 0, False: 0}
    for _ in range(600):
        m = int(rng.integers(1, 9))
        ids = [alphabet[i] for i in rng.integers(0, len(alphabet), m)]
        rows = _rows(m, 0, np.array(ids, dtype=str))
        for arr in (rows.item_id, rows.item_id.astype(object)):  # proved, and counted
            r = replace(rows, item_id=arr)
            assert repeated(r) == _brute_repeated(ids, None), ids
        cluster = [str(c) for c in rng.integers(0, 3, m)]
        assert repeated(replace(rows, cluster=np.array(cluster))) == _brute_repeated(ids, cluster), cluster
        seen[_brute_repeated(ids, None)] += 1
    assert min(seen.values()) > 50  # both answers were asked for
    big = np.char.add("i", np.arange(200_000).astype(str))
    rows = _rows(big.size, 0, big)
    assert not repeated(rows)
    assert repeated(replace(rows, item_id=np.concatenate([big[:-1], big[:1]])))


def test_distinct_codes_are_numpy_s_inverse_and_counts_agree() -> None:
    """The cluster numbers from packed ids equal ``np.unique``'s inverse (the bootstrap
    draws clusters in that order), and the load note's counts equal a dict's."""
    from collections import Counter

    from calib.clusters import _distinct, _ids_repeated, distinct_codes, labels

    rng = np.random.default_rng(5)
    # packable (<= 8 characters below U+0100, NUL inside), too wide, above U+00FF, empty
    alphabet = ["", "a", "b", "ab", "a\x00b", "\x00a", "é", "ÿz", "q1234567", "q12345678", "\u0100", "\U0001f600"]
    packed_seen = 0
    for _ in range(1500):
        m = int(rng.integers(1, 12))
        pool = alphabet[:9] if rng.random() < 0.5 else alphabet  # half the draws pack
        ids = [pool[i] for i in rng.integers(0, len(pool), m)]
        values = np.array(ids, dtype=str)
        want = np.unique(values, return_inverse=True)[1].reshape(-1)
        assert np.array_equal(distinct_codes(values), want), ids
        assert np.array_equal(distinct_codes(values.astype(object)), want), ids
        assert _ids_repeated(values, values.tolist()) == sum(
            1 for x, c in Counter(values.tolist()).items() if c > 1 and x != ""), ids
        lab, _ = labels(values, np.arange(1, m + 1))
        assert _distinct(lab) == len(np.unique(lab)), ids
        packed_seen += values.itemsize // 4 <= 8 and all(ord(ch) <= 0xFF for x in ids for ch in x)
    assert packed_seen > 300  # the packed path was taken, not only the fallback
