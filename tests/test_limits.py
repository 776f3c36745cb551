"""Limits: configuration from the environment, gzip bombs, row and line caps, the
per-session memory budget and the heavy-work gate."""

from __future__ import annotations

import gc
import gzip
import json
import threading
import time
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest

from calib.errors import CalibError
from calib.hosting.budget import HeavyGate, MemoryLedger, estimated_bytes
from calib.limits import MB, Limits
from calib.loading import load
from calib.readers.base import MAX_LINE_CHARS, MAX_ROWS, LoadOptions

MiB = 1 << 20


# ------------------------------------------------------------------- config
def test_defaults_and_environment() -> None:
    d = Limits.from_env({})
    assert d == Limits()
    assert (d.max_upload_mb, d.max_decompressed_mb, d.max_rows, d.max_line_chars) == (200, 200, MAX_ROWS, MAX_LINE_CHARS)
    env = {
        "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "50", "CALIB_MAX_DECOMPRESSED_MB": "300", "CALIB_MAX_ROWS": "1_000",
        "CALIB_MAX_LINE_CHARS": "5000", "CALIB_SESSION_MEMORY_MB": "0", "CALIB_TOTAL_MEMORY_MB": "800",
        "CALIB_HEAVY_JOBS": "3", "CALIB_HEAVY_WAIT_SECONDS": "2.5",
    }
    lim = Limits.from_env(env)
    assert lim == Limits(50, 300, 1000, 5000, 0, 800, 3, 2.5)
    # the dashboard passes the server's effective option, which wins
    assert Limits.from_env(env, max_upload_mb=75).max_upload_mb == 75


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("CALIB_MAX_ROWS", "lots", "CALIB_MAX_ROWS='lots' is not a whole number (default 5000000)"),
        ("CALIB_MAX_ROWS", "0", "CALIB_MAX_ROWS='0' must be at least 1"),
        ("CALIB_HEAVY_WAIT_SECONDS", "inf", "CALIB_HEAVY_WAIT_SECONDS='inf' must be a finite number"),
        ("STREAMLIT_SERVER_MAX_UPLOAD_SIZE", "-5", "STREAMLIT_SERVER_MAX_UPLOAD_SIZE='-5' must be at least 1"),
    ],
)
def test_bad_environment_values_name_the_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(CalibError) as err:
        Limits.from_env({name: value})
    assert str(err.value).startswith(message)


def test_load_options_apply_server_caps_over_user_choices() -> None:
    user = LoadOptions(confidence_key="c", max_rows=10**9, max_line_chars=10**9, max_decompressed_bytes=10**12)
    got = Limits(max_rows=11, max_line_chars=222, max_decompressed_mb=3).load_options(user)
    assert (got.confidence_key, got.max_rows, got.max_line_chars, got.max_decompressed_bytes) == ("c", 11, 222, 3 * MiB)


def test_check_upload_message() -> None:
    Limits(max_upload_mb=1).check_upload("a.jsonl", MiB)
    with pytest.raises(CalibError, match=r"^big.jsonl: 1.0 MB is more than this server accepts \(1 MB per file\)"):
        Limits(max_upload_mb=1).check_upload("big.jsonl", MiB + 1)


# --------------------------------------------------------------- gzip bombs
def write_member_bomb(path: Path, gib: int) -> int:
    """A valid gzip file of ``gib`` GiB of zeros: 1 MiB members (~1 KB each), written
    one after another so the bomb never exists in memory. Returns its size."""
    member = gzip.compress(b"\0" * MiB, 9)
    with path.open("wb") as fh:
        for _ in range(gib * 1024):
            fh.write(member)
    return path.stat().st_size


def write_stream_bomb(path: Path, gib: int) -> int:
    """One deflate stream of ``gib`` GiB of zeros. After a full flush the compressor has
    no history, so every further 1 MiB of zeros compresses to the same bytes: the
    stream is built from one compressed block repeated. (The trailer's CRC is not
    that of the whole stream; a capped reader stops long before it.)"""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * MiB
    first = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    assert c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH) == again
    with path.open("wb") as fh:
        fh.write(first)
        for _ in range(gib * 1024 - 1):
            fh.write(again)
        fh.write(c.flush())
    return path.stat().st_size


@pytest.mark.parametrize("writer", [write_member_bomb, write_stream_bomb])
def test_gzip_bomb_is_refused_with_clear_message(tmp_path: Path, writer) -> None:
    path = tmp_path / "judge.jsonl.gz"
    size = writer(path, 10)  # 10 GiB of zeros
    assert size < 11 * MiB  # ~10 MB on disk: well under the 200 MB upload cap
    options = Limits(max_decompressed_mb=8).load_options()
    tracemalloc.start()
    try:
        with pytest.raises(CalibError) as err:
            load(path, options=options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(err.value) == (
        f"{path}: decompresses to more than 8,388,608 bytes (8 MB); refused, since a .gz that inflates past "
        "this cap may be a gzip bomb. If the file is genuine, raise the cap: on the dashboard with the "
        "environment variable CALIB_MAX_DECOMPRESSED_MB (in MB; restart the server after setting it), in "
        "Python with LoadOptions(max_decompressed_bytes=...); or decompress the file and load it uncompressed."
    )
    # Refused after inflating about the cap, not 10 GiB.
    assert peak < size + 4 * 8 * MiB


def test_gzip_under_the_cap_loads(tmp_path: Path) -> None:
    path = tmp_path / "table.csv.gz"
    path.write_bytes(gzip.compress(b"value,n,correct\n10,4,1\n90,4,3\n"))
    ds = load(path, options=Limits(max_decompressed_mb=1).load_options())
    assert ds.table.n.tolist() == [4, 4] and ds.table.correct.tolist() == [1, 3]


# --------------------------------------------------------- rows and lines
def logprob_lines(n: int) -> bytes:
    return b"".join(
        json.dumps({"id": f"q{i}", "logprobs": [-0.1, -2.5, -3.0], "gold": i % 3}).encode() + b"\n" for i in range(n)
    )


def test_row_cap_refuses_the_input(tmp_path: Path) -> None:
    options = Limits(max_rows=5).load_options()
    ok = load("five.jsonl", logprob_lines(5), options=options, fmt="logprobs")
    assert ok.report.kept == 5
    with pytest.raises(CalibError, match=r"^six.jsonl: more than 5 lines; refused"):
        load("six.jsonl", logprob_lines(6), options=options, fmt="logprobs")


def test_line_cap_drops_the_line_and_says_why() -> None:
    long_line = json.dumps({"id": "x" * 500, "logprobs": [-0.1, -2.0], "gold": 0}).encode() + b"\n"
    ds = load("mixed.jsonl", logprob_lines(3) + long_line, options=Limits(max_line_chars=200).load_options(),
              fmt="logprobs")
    assert ds.report.kept == 3 and ds.report.dropped == 1
    (issue,) = ds.report.issues
    assert issue.line == 4 and issue.reason == "line too long"
    assert "over the 200 limit" in issue.detail


# ------------------------------------------------------------------ memory
def test_estimated_bytes_counts_arrays_and_objects_once() -> None:
    a = np.zeros(1000)
    ids = np.array([f"item-{i:05d}" for i in range(2000)], dtype=object)
    per_id = [len(s) + 49 for s in ids]  # CPython: 49 bytes of header per compact ASCII str
    est = estimated_bytes((a, a, ids))
    assert 8000 + ids.nbytes + sum(per_id) <= est <= 8000 + ids.nbytes + sum(per_id) + 200


def test_session_budget_refuses_and_releases() -> None:
    ledger = MemoryLedger(session_bytes=100 * MB, total_bytes=150 * MB)
    a, b = ledger.open_session(), ledger.open_session()
    a.reserve("judge.jsonl", 60 * MB, "judge.jsonl")
    a.reserve("judge.jsonl", 70 * MB, "judge.jsonl")  # re-booking a key replaces it
    assert a.used == 70 * MB
    with pytest.raises(CalibError) as err:
        a.reserve("other.jsonl", 40 * MB, "other.jsonl")
    assert str(err.value).startswith(
        "other.jsonl: needs about 40 MB in memory and this session would then hold 110 MB, over its budget of 100 MB"
    )
    assert a.used == 70 * MB  # nothing booked on refusal
    b.reserve("x", 80 * MB, "x.jsonl")
    with pytest.raises(CalibError, match="the server is holding too much data for its other users"):
        b.reserve("y", 1 * MB, "y.jsonl")
    a.release("judge.jsonl")
    b.reserve("y", 1 * MB, "y.jsonl")
    assert ledger.used() == 81 * MB


def test_session_bookings_are_freed_when_the_session_state_is_dropped() -> None:
    ledger = MemoryLedger(session_bytes=0, total_bytes=100 * MB)
    state = {"budget": ledger.open_session()}  # stands for st.session_state
    state["budget"].reserve("big", 90 * MB, "big.jsonl")
    other = ledger.open_session()
    with pytest.raises(CalibError):
        other.reserve("x", 20 * MB, "x.jsonl")
    del state["budget"]
    gc.collect()
    other.reserve("x", 20 * MB, "x.jsonl")
    assert ledger.used() == 20 * MB


# -------------------------------------------------------------- heavy work
def test_heavy_gate_bounds_concurrency_and_refuses_when_busy() -> None:
    gate = HeavyGate(slots=2, wait_s=5.0)
    running, peak = 0, 0
    lock = threading.Lock()

    def job() -> None:
        nonlocal running, peak
        with gate.slot("job"):
            with lock:
                running += 1
                peak = max(peak, running)
            time.sleep(0.05)
            with lock:
                running -= 1

    threads = [threading.Thread(target=job) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 2

    busy = HeavyGate(slots=1, wait_s=0.05)
    with (
        busy.slot("first"),
        pytest.raises(CalibError, match=r"^bootstrap of a.jsonl: the server is busy"),
        busy.slot("bootstrap of a.jsonl"),
    ):
        pass
    with busy.slot("after"):  # the slot was given back
        pass


# --------------------------------------------------- server configuration files
ROOT = Path(__file__).resolve().parents[1]


def test_streamlit_config_names_real_options_with_the_intended_values() -> None:
    import tomllib

    from streamlit import config as st_config

    known = st_config.get_config_options()
    conf = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    flat = {f"{section}.{key}": value for section, opts in conf.items() for key, value in opts.items()}
    unknown = sorted(k for k in flat if k not in known)
    assert unknown == [], f"not Streamlit options: {unknown}"
    assert flat["server.maxUploadSize"] == Limits().max_upload_mb == 200
    assert flat["server.enableXsrfProtection"] is True
    assert flat["server.enableCORS"] is True
    assert "localhost" in flat["server.allowedHosts"]
    assert flat["browser.gatherUsageStats"] is False
    assert flat["client.showErrorDetails"] == "none"
    # no gc.collect(2) after every run: 80-120 ms holding the interpreter lock (issue 29)
    assert flat["runner.postScriptGC"] is False


def test_dockerfile_flags_and_env_name_real_options() -> None:
    import re

    from streamlit import config as st_config

    known = st_config.get_config_options()
    text = (ROOT / "Dockerfile").read_text()
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))
    assert cmd[:3] == ["streamlit", "run", "app.py"]
    for flag in cmd[3:]:
        assert flag.split("=")[0].removeprefix("--") in known, flag
    env_names = {o.env_var for o in known.values()}
    for name in re.findall(r"\b(STREAMLIT_[A-Z_]+)=", text):
        assert name in env_names, name


# ------------------------------------------------------------------ issue 22: groups
def _grouped_lines(groups: int, per: int = 1, repeat_ids: bool = False) -> bytes:
    rows = []
    for g in range(groups):
        for j in range(per):
            item = f"i{j}" if repeat_ids else f"g{g}-{j}"
            rows.append(json.dumps({"id": item, "g": f"grp{g:05d}", "confidence": 50 + 10 * ((g + j) % 5),
                                    "correct": (g * 7 + j) % 3 > 0}))
    return ("\n".join(rows) + "\n").encode()


def test_the_number_of_groups_is_capped_before_any_group_is_audited(monkeypatch: pytest.MonkeyPatch) -> None:
    """100,000 one-row groups (8 MB) had not finished `audit --group-key` after 600 s."""
    import calib.audit

    def no_audit(*args: object, **kwargs: object) -> None:
        raise AssertionError("a group was audited")

    monkeypatch.setattr(calib.audit, "_audit_one", no_audit)
    opts = LoadOptions(group_key="g", max_groups=40)
    with pytest.raises(CalibError, match=r"g\.jsonl: 41 groups \(distinct values of the group field 'g'\), "
                                         r"over the 40 one input may have.*CALIB_MAX_GROUPS"):
        load("g.jsonl", _grouped_lines(41), options=opts)
    assert len(load("g.jsonl", _grouped_lines(40), options=opts).table.groups) == 40
    counts = b"group,value,n,correct\n" + b"".join(b"g%d,90,10,9\n" % i for i in range(41))
    with pytest.raises(CalibError, match=r"t\.csv: 41 groups"):
        load("t.csv", counts, options=LoadOptions(max_groups=40))
    assert Limits.from_env({"CALIB_MAX_GROUPS": "7"}).load_options().max_groups == 7
    assert Limits.from_env({}).load_options().max_groups == 1_000
    with pytest.raises(CalibError, match="CALIB_MAX_GROUPS"):
        Limits.from_env({"CALIB_MAX_GROUPS": "0"})


def test_every_group_table_comes_from_one_pass_and_equals_select(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-group audits took each group's table with select, which scans every cell
    and every cluster per group (groups x cells). by_group must give the same tables."""
    from calib.audit import audit
    from calib.table import CountTable

    for data, key in ((_grouped_lines(20, per=3), None), (_grouped_lines(10, per=4, repeat_ids=True), "id")):
        ds = load("g.jsonl", data, options=LoadOptions(group_key="g", cluster_key=key))
        t = ds.table
        assert (t.clusters is not None) == (key is not None)
        parts = t.by_group()
        assert len(parts) == len(t.groups)
        for gi, part in enumerate(parts):
            ref = t.select(gi)  # the reference: one group's mask
            for f in ("value", "prob", "n", "correct", "py_sum", "sq_sum", "nll_sum", "group"):
                assert np.array_equal(getattr(part, f), getattr(ref, f)), f
            assert part.groups == ref.groups
            if key is not None:
                assert part.clusters is not None and ref.clusters is not None
                assert np.array_equal(part.clusters.n.toarray(), ref.clusters.n.toarray())
                assert np.array_equal(part.clusters.k.toarray(), ref.clusters.k.toarray())
        calls: list[object] = []
        with monkeypatch.context() as mp:
            mp.setattr(CountTable, "select", lambda self, group, calls=calls: calls.append(group))
            a = audit(t, reps=0)
        assert calls == [] and len(a.groups) == len(t.groups)  # select was called twice per group
