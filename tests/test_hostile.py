"""The hostile-input corpus (tests/hostile.py) through the command line: every file
gets exit 0 (valid rows kept, the bad ones named) or 2 (refused with a message
naming the line or sample and the reason), never 3 (a crash)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from calib.cli import main
from tests import hostile

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> tuple[int, str]:
    code = main(["audit", str(path), "--reps", "0", *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("case", hostile.CASES, ids=[c.name for c in hostile.CASES])
def test_every_hostile_file_gets_a_message_not_a_crash(
    case: hostile.Case, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / case.name
    path.write_bytes(case.bytes())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, text = run(capsys, path, *case.args)
    assert code == case.exit, text[-2000:]
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    low = text.lower()
    for frag in case.says:
        assert frag.lower() in low, f"{frag!r} not in:\n{text[-3000:]}"
    if case.exit == 0:
        m = re.search(r"kept ([\d,]+)", text)
        assert m, text[:2000]
        assert int(m.group(1).replace(",", "")) == case.kept
    else:
        assert text.startswith("calib: ") and "internal error" not in text


def test_zip_slip_names_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "slip.eval"
    path.write_bytes(hostile.eval_zip_slip(0))
    before = set(Path("/tmp").glob("calib_zip_slip*"))
    assert run(capsys, path)[0] == 0
    assert set(Path("/tmp").glob("calib_zip_slip*")) == before


@pytest.mark.parametrize("name", ["lone_surrogates.jsonl", "surrogate_id.eval"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_lone_surrogates_print_in_text_and_json(tmp_path: Path, name: str, fmt: str) -> None:
    """A real process with a UTF-8 stdout: capsys would accept what the terminal refuses."""
    case = hostile.BY_NAME[name]
    path = tmp_path / name
    path.write_bytes(case.bytes())
    flags = ["--json"] if fmt == "json" else []
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "calib", "audit", str(path), "--reps", "0", *flags],
                       capture_output=True, env=env, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    out = r.stdout.decode("utf-8")  # valid UTF-8: no lone surrogate reached the bytes
    if fmt == "json":
        assert json.loads(out)["load_report"]["kept"] == case.kept
    else:
        assert f"kept {case.kept}" in out


#: One file of each class that once crashed a page (an exception box that left the
#: session unable to load the next file).
DASHBOARD = ("lone_surrogates.jsonl", "surrogate_id.eval", "deep_first_line.jsonl", "array_one_line.jsonl",
             "csv_huge_counts.csv", "deep_sample.eval", "logprobs_numbers.jsonl", "deep_log.json",
             hostile.LMEVAL_ARRAY, "huge_ints.jsonl")


@pytest.mark.parametrize("name", DASHBOARD)
def test_dashboard_shows_a_message_and_loads_the_next_file(name: str) -> None:
    from tests.apptest import app, clear_caches, ok, upload

    clear_caches()
    case = hostile.BY_NAME[name]
    at = upload(ok(app().run()), name, case.bytes())
    if case.exit:
        assert at.error, "a refused file shows its message"
    at = upload(at, "good.jsonl", hostile.good_lines())
    models = at.sidebar.selectbox(key="w_model").options
    assert "good" in models and (case.exit or len(models) == 2)


# ------------------------------------------------------------- the layers one by one
def test_gunzip_refuses_before_holding_and_keeps_valid_members() -> None:
    import gzip

    from calib.errors import CalibError
    from calib.readers.source import gunzip_capped

    one = gzip.compress(b"a\n" * 1000)
    assert gunzip_capped(one + one, "x.gz", 4000) == b"a\n" * 2000  # concatenated members
    with pytest.raises(CalibError, match=r"x\.gz: decompresses to more than 3,999 bytes"):
        gunzip_capped(one + one, "x.gz", 3999)
    # a line-per-row input over the row cap is refused in the counting pass
    with pytest.raises(CalibError, match=r"x\.jsonl\.gz: more than 1,500 lines once decompressed"):
        gunzip_capped(one + one, "x.jsonl.gz", 10**6, max_lines=1500)
    with pytest.raises(CalibError, match=r"compressed twice"):
        gunzip_capped(gzip.compress(one), "x.gz", 10**6)
    with pytest.raises(CalibError, match=r"not a valid gzip file"):
        gunzip_capped(one + b"junk", "x.gz", 10**6)


def test_json_loads_reports_depth_reads_long_integers_and_escapes_lone_surrogates() -> None:
    from calib.readers.jsonl import TOO_DEEP, JsonLimitError, json_loads

    with pytest.raises(JsonLimitError, match="nested too deeply"):
        json_loads("[" * 100_000 + "]" * 100_000)
    assert str(JsonLimitError(TOO_DEEP)) == TOO_DEEP
    assert json_loads('{"n": ' + "9" * 5000 + "}") == {"n": float("inf")}
    assert json_loads('{"n": 12}') == {"n": 12}
    got = json_loads(b'{"id": "x\\ud800", "e": "\\ud83d\\ude00", "k\\udfff": ["\\udbff"]}')
    assert got == {"id": "x\\ud800", "e": "\U0001F600", "k\\udfff": ["\\udbff"]}
    json.dumps(got, ensure_ascii=False).encode("utf-8")  # encodable: no lone surrogate left


def test_parse_cost_bounds_the_expansion_and_the_check_names_the_document() -> None:
    from calib.readers.base import LoadOptions
    from calib.readers.jsonl import JsonLimitError, check_json_size, parse_cost

    bomb = b"[" + b"[]," * 100_000 + b"[]]"
    assert parse_cost(bomb) > 25 * len(bomb)  # empty lists: ~25x their text once parsed
    text = json.dumps({"question": "x" * 10_000, "confidence": 90}).encode()
    assert parse_cost(text) < 3 * len(text)
    opts = LoadOptions(max_json_bytes=10_000, max_parse_bytes=1_000_000)
    with pytest.raises(JsonLimitError, match=r"member m\.json is 0\.011 MB of JSON, over the 0\.0095 MB"):
        check_json_size(b" " * 12_000, "member m.json", opts)
    with pytest.raises(JsonLimitError, match=r"member m\.json would take about 14\.3 MB of memory to parse"):
        check_json_size(bomb, "member m.json", opts, whole_file=True)


def test_sniffing_a_json_array_and_parquet_by_its_magic() -> None:
    from calib.loading import sniff_format

    assert sniff_format("x.jsonl", hostile.array_one_line(3)) == "stated"
    assert sniff_format("x.json", hostile.array_counts(0)) == "counts"
    assert sniff_format("x.jsonl", hostile.parquet(3)) == "counts"
    assert sniff_format("x.jsonl", b'{"x": ' + hostile.deep(50_000) + b"}\n") == "stated"


def test_parquet_row_count_is_refused_from_the_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows of a Parquet file over the cap are never read."""
    import pyarrow.parquet as pq

    from calib.errors import CalibError
    from calib.readers.counts import read_counts

    data = hostile.parquet(11)

    def no_rows(*args: object, **kwargs: object) -> None:
        raise AssertionError("rows were read")

    monkeypatch.setattr(pq.ParquetFile, "read", no_rows)
    with pytest.raises(CalibError, match=r"more than 10 rows.*metadata says 11"):
        read_counts("t.parquet", data=data, max_rows=10)


def test_a_map_nested_too_deeply_is_refused_by_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cmap = tmp_path / "map.json"
    cmap.write_bytes(b'{"method": ' + hostile.deep(100_000) + b"}")
    data = tmp_path / "judge.jsonl"
    data.write_bytes(hostile.good_lines())
    code = main(["apply", str(cmap), str(data), "--out", str(tmp_path / "out.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "map.json: not a calib map: invalid JSON" in err and "internal error" not in err


def test_a_line_reader_refuses_what_it_could_not_hold_before_the_first_line() -> None:
    """A small .gz of millions of short option log-prob lines: each line costs a reader
    hundreds of bytes of Python objects, so the estimate is checked before parsing."""
    from calib.errors import CalibError
    from calib.loading import load
    from calib.readers.base import LoadOptions

    line = b'{"id": "q1", "logprobs": [-0.1, -2.3, -3.0, -4.1], "gold": 0}\n'
    small = LoadOptions(max_parse_bytes=2**20)
    parsed: list[int] = []
    import calib.readers.jsonl as lp

    real = lp.json_loads
    lp.json_loads = lambda text: parsed.append(1) or real(text)  # type: ignore[assignment]
    try:
        with pytest.raises(CalibError, match=r"2,000 lines .* would take about 2 MB .* over the 1 MB allowed"):
            load("many.jsonl", line * 2_000, options=small)
        assert parsed == []  # refused before any line was parsed
        assert load("few.jsonl", line * 1_000, options=small).table.total == 1_000
    finally:
        lp.json_loads = real


# ------------------------------------------------------------- issue 22: help text
@pytest.mark.parametrize("command", ["", "audit", "fit", "apply", "compare", "route", "drift", "sql", "labels"])
def test_help_shows_a_single_percent_sign(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """argparse %-formats help strings but prints descriptions as written: a ``%%`` in a
    description reached the terminal as "5%%"."""
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"] if command else ["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "usage: calib" in out and "%%" not in out, out
    if command in ("route", "compare"):
        assert "%" in out  # the sign is still there, once


# ------------------------------------------------------------- issue 22: gzip forms
def test_gunzip_reads_each_input_byte_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many empty members: the decompressor was handed the whole rest of the file once per
    member (250k members of 20 bytes took 150 s); the bytes handed to it must stay within a
    constant factor of the file (independent of the number of members)."""
    import gzip
    import zlib

    import calib.readers.source as source

    fed = [0]

    class Counting:
        def __init__(self, *args: object) -> None:
            self.d = zlib.decompressobj(*args)  # type: ignore[arg-type]

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            fed[0] += len(data)
            return self.d.decompress(data, max_length)

        def __getattr__(self, name: str) -> object:
            return getattr(self.d, name)

    class Zlib:
        def __getattr__(self, name: str) -> object:
            return Counting if name == "decompressobj" else getattr(zlib, name)

    monkeypatch.setattr(source, "zlib", Zlib())
    empty = gzip.compress(b"", mtime=0)
    line = gzip.compress(b'{"confidence": 90, "correct": true}\n', mtime=0)
    for n in (1_000, 4_000):
        fed[0] = 0
        data = empty * n + line
        assert source.gunzip_capped(data, "m.jsonl.gz", 10**6) == b'{"confidence": 90, "correct": true}\n'
        assert fed[0] <= 8 * len(data), (n, fed[0], len(data))


def test_gunzip_ignores_trailing_zeros_and_a_plain_file_named_gz_is_read_as_plain() -> None:
    import gzip

    from calib.errors import CalibError
    from calib.loading import load
    from calib.readers.source import gunzip_capped

    one = gzip.compress(b"a\n" * 10, mtime=0)
    assert gunzip_capped(one + b"\0" * 1000, "x.gz", 10**6) == b"a\n" * 10  # tape / dd padding
    assert gunzip_capped(one + one + b"\0", "x.gz", 10**6) == b"a\n" * 20
    with pytest.raises(CalibError, match=r"not a valid gzip file"):
        gunzip_capped(one + b"\0" * 10 + b"junk", "x.gz", 10**6)  # zeros, then not zeros
    ds = load("pad.jsonl.gz", hostile.gzip_padded(0))
    assert ds.report.kept == hostile.GOOD
    ds = load("plain.jsonl.gz", hostile.good_lines())
    assert ds.report.kept == hostile.GOOD
    assert any("not gzip-compressed" in n for n in ds.report.notes), ds.report.notes
