"""Loading stated-confidence JSONL: the bad-input corpus (issue 2, point 2) and the
ways a file arrives (path, uploaded bytes, .gz).

Expected values are written out by hand from the corpus files (see
tests/data/bad/make_corpus.py, which documents each line), never taken from the
reader: which ids must survive, which line fails for which reason.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers import stated
from calib.readers.base import LoadOptions, Source
from calib.readers.source import gunzip_capped, read_source

BAD = Path(__file__).parent / "data" / "bad"

# file -> (ids that must be kept, in order; [(line, reason, field, words the message must contain)]; blank lines)
CASES: dict[str, tuple[list[str], list[tuple[int, str, str | None, str]], int]] = {
    "invalid_json.jsonl": (
        ["a1", "a3", "a5"],
        [(2, "invalid JSON", None, "not valid JSON"), (4, "invalid JSON", None, "not valid JSON")],
        0,
    ),
    "not_object.jsonl": (
        ["b1", "b4", "b7"],
        [(2, "not a JSON object", None, "array"), (3, "not a JSON object", None, "string"),
         (5, "not a JSON object", None, "null"), (6, "not a JSON object", None, "number")],
        0,
    ),
    "missing_confidence.jsonl": (
        ["c1", "c4", "c5"],
        [(2, "missing confidence", "confidence", "no confidence value"),
         (3, "missing confidence", "confidence", "no confidence value")],
        0,
    ),
    "non_numeric.jsonl": (
        ["d1", "d5", "d6"],
        [(2, "non-numeric confidence", "confidence", '"very sure", not a number'),
         (3, "non-numeric confidence", "confidence", "true, not a number"),
         (4, "non-numeric confidence", "confidence", "[90], not a number")],
        0,
    ),
    "outside_scale.jsonl": (
        [f"e{i}" for i in range(1, 101)] + [f"e{i}" for i in range(102, 201)],
        [(101, "outside the scale", "confidence", "150 is outside the 0-100 scale"),
         (201, "outside the scale", "confidence", "-5 is outside the 0-100 scale")],
        0,
    ),
    "unknown_outcome.jsonl": (
        ["f1", "f3", "f5", "f6"],
        [(2, "unknown outcome token", "correct", '"maybe", not an outcome'),
         (4, "unknown outcome token", "correct", "2, not an outcome"),
         (7, "missing outcome", "correct", "no correct value")],
        0,
    ),
    "nan.jsonl": (
        ["g1", "g3"],
        # Python's json reads NaN (refused as not finite) but not -NaN (invalid JSON)
        [(2, "NaN/Infinity", "confidence", "NaN, not a finite number"), (4, "invalid JSON", None, "not valid JSON")],
        0,
    ),
    "infinity.jsonl": (
        ["h1", "h3", "h6"],
        [(2, "NaN/Infinity", "confidence", "Infinity, not a finite number"),
         (4, "NaN/Infinity", "confidence", "-Infinity, not a finite number"),
         (5, "NaN/Infinity", "confidence", "Infinity, not a finite number")],
        0,
    ),
    "non_utf8.jsonl": (
        ["i1", "i3", "i5"],
        [(2, "not UTF-8", None, "not UTF-8 at column 12"), (4, "not UTF-8", None, "not UTF-8 at column 9")],
        0,
    ),
    "truncated_last_line.jsonl": (
        ["j1", "j2", "j3"],
        [(4, "truncated line", None, "cut off")],
        0,
    ),
    "blank_lines.jsonl": (["k1", "k5", "k8"], [], 6),
    "bom.jsonl": (["l1", "l2", "l3"], [], 0),
    "crlf.jsonl": (["m1", "m2", "m3", "m5"], [], 1),
    "one_class.jsonl": (["n1", "n2", "n3", "n4"], [], 0),
    "single_confidence.jsonl": (["o1", "o2", "o3", "o4"], [], 0),
    "mixed.jsonl": (
        ["p1", "p9", "p11"] + [f"q{i}" for i in range(13, 213)],
        [(3, "invalid JSON", None, "not valid JSON"), (4, "not a JSON object", None, "array"),
         (5, "missing confidence", "confidence", "no confidence value"),
         (6, "non-numeric confidence", "confidence", '"sure", not a number'),
         (7, "NaN/Infinity", "confidence", "NaN"), (8, "unknown outcome token", "correct", '"perhaps"'),
         (10, "not UTF-8", None, "not UTF-8"), (12, "outside the scale", "confidence", "101 is outside"),
         (213, "truncated line", None, "cut off")],
        1,
    ),
}

# lines in each file (counted by hand: the newline-terminated ones plus an unterminated last one)
LINES = {
    "invalid_json.jsonl": 5, "not_object.jsonl": 7, "missing_confidence.jsonl": 5, "non_numeric.jsonl": 6,
    "outside_scale.jsonl": 201, "unknown_outcome.jsonl": 7, "nan.jsonl": 4, "infinity.jsonl": 6,
    "non_utf8.jsonl": 5, "truncated_last_line.jsonl": 4, "blank_lines.jsonl": 9, "bom.jsonl": 3,
    "crlf.jsonl": 5, "one_class.jsonl": 4, "single_confidence.jsonl": 4, "mixed.jsonl": 213,
}


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "per-line"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_keeps_every_valid_row_and_names_each_bad_line(name: str, fast: bool) -> None:
    keep, bad, blank = CASES[name]
    path = BAD / name
    rows, report = stated.read(read_source(path), LoadOptions(), fast=fast)
    assert list(rows.item_id) == keep
    assert report.kept == len(keep) == len(rows)
    assert report.blank == blank
    assert report.lines_read == LINES[name]
    assert report.kept + report.dropped + report.blank == report.lines_read
    assert report.dropped == len(bad)
    got = [(i.line, i.reason, i.field) for i in report.issues]
    assert got == [(line, reason, fld) for line, reason, fld, _ in bad]
    for issue, (line, _reason, _fld, words) in zip(report.issues, bad, strict=True):
        msg = issue.message()
        assert msg.startswith(f"{name}:line {line}")
        assert words in msg
    by_reason: dict[str, int] = {}
    for _line, reason, _fld, _w in bad:
        by_reason[reason] = by_reason.get(reason, 0) + 1
    assert report.dropped_by_reason == by_reason
    # the kept lines are exactly the lines not reported and not blank
    assert set(rows.line.tolist()).isdisjoint({line for line, *_ in bad})


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][1]))
def test_strict_stops_at_the_first_bad_line(name: str) -> None:
    _keep, bad, _blank = CASES[name]
    line, _reason, _fld, words = min(bad)
    with pytest.raises(CalibError) as exc:
        stated.read(read_source(BAD / name), LoadOptions(strict=True))
    msg = str(exc.value)
    assert msg.startswith(f"{name}:line {line}")
    assert words in msg
    assert "strict" in msg


def test_kept_values_of_the_mixed_file() -> None:
    rows, report = stated.read(read_source(BAD / "mixed.jsonl"), LoadOptions())
    # line 11 wrote "85%": the number 85 on the file's 0-100 scale; "yes" is right
    i = list(rows.item_id).index("p11")
    assert rows.stated[i] == 85 and rows.prob[i] == pytest.approx(0.85) and rows.correct[i]
    assert rows.line[:3].tolist() == [1, 9, 11]
    expected = [95, 60, 85] + [50 + i % 50 for i in range(13, 213)]
    assert rows.stated.tolist() == expected
    assert rows.correct.tolist() == [True, False, True] + [bool(i % 4) for i in range(13, 213)]
    assert report.scale is not None and report.scale["name"] == "0-100"


def test_empty_file_is_refused_by_name() -> None:
    with pytest.raises(CalibError, match=r"^empty\.jsonl: the file is empty$"):
        load(BAD / "empty.jsonl")
    with pytest.raises(CalibError, match=r"^only_blank\.jsonl: the file is empty \(only blank lines\)$"):
        load(BAD / "only_blank.jsonl")


def test_no_valid_row_names_the_commonest_reason() -> None:
    with pytest.raises(CalibError) as exc:
        load(BAD / "no_valid_rows.jsonl")
    msg = str(exc.value)
    assert msg.startswith("no_valid_rows.jsonl: no usable line: all 4 non-blank lines were dropped")
    assert "commonest reason: NaN/Infinity (3 lines)" in msg
    assert "line 1 [confidence]: confidence is NaN" in msg
    # a named field that no line has: every line that parses as an object (212 less
    # lines 3, 4, 10 and 213) is missing it
    with pytest.raises(CalibError) as exc:
        load(BAD / "mixed.jsonl", options=LoadOptions(confidence_key="stated"))
    msg = str(exc.value)
    assert msg.startswith("mixed.jsonl: no usable line: all 212 non-blank lines were dropped")
    assert "commonest reason: missing confidence (208 lines)" in msg


def test_no_confidence_or_outcome_field_says_what_was_looked_for() -> None:
    with pytest.raises(CalibError) as exc:
        load(BAD / "no_confidence_field.jsonl")
    msg = str(exc.value)
    assert msg.startswith("no_confidence_field.jsonl: no confidence field found in the first 2 objects")
    assert "keys seen: id, correct, certain" in msg and "--confidence-key" in msg
    with pytest.raises(CalibError) as exc:
        load(BAD / "no_outcome_field.jsonl")
    msg = str(exc.value)
    assert msg.startswith("no_outcome_field.jsonl: no outcome field found in the first 2 objects")
    assert "keys seen: id, confidence, verdict" in msg and "--outcome-key" in msg


def test_one_class_and_single_value_load_with_a_note() -> None:
    ds = load(BAD / "one_class.jsonl")
    assert ds.table.total == 4 and ds.table.total_correct == 4
    assert any(n.startswith("one class only: every kept answer is right") for n in ds.report.notes)
    ds = load(BAD / "single_confidence.jsonl")
    assert ds.table.cells == 1 and ds.table.value.tolist() == [90.0]
    assert ds.table.n.tolist() == [4] and ds.table.correct.tolist() == [2]
    assert "single distinct confidence: every kept line states 90" in ds.report.notes


def test_line_too_long_is_reported_and_the_rest_kept() -> None:
    long_line = b'{"id": "long", "confidence": 50, "correct": true, "pad": "' + b"x" * 500 + b'"}'
    data = b'{"id": "a", "confidence": 60, "correct": true}\n' + long_line + b'\n{"id": "b", "confidence": 70, "correct": false}\n'
    for fast in (True, False):
        rows, report = stated.read(Source("long.jsonl", data), LoadOptions(max_line_chars=200), fast=fast)
        assert list(rows.item_id) == ["a", "b"]
        (issue,) = report.issues
        assert (issue.line, issue.reason) == (2, "line too long")
        assert f"line is {len(long_line):,} bytes, over the 200 limit" in issue.message()


def test_too_many_lines_is_refused() -> None:
    data = b"".join(b'{"confidence": 50, "correct": true}\n' for _ in range(11))
    with pytest.raises(CalibError, match=r"^many\.jsonl: more than 10 lines \(11\); refused"):
        load("many.jsonl", data, options=LoadOptions(max_rows=10))
    assert load("ok.jsonl", data[: data.index(b"\n") + 1] * 10, options=LoadOptions(max_rows=10)).table.total == 10


def test_uploaded_bytes_and_gzip_read_like_the_file() -> None:
    path = BAD / "mixed.jsonl"
    a = load(path)
    b = load("upload.jsonl", path.read_bytes())
    c = load("upload.jsonl.gz", gzip.compress(path.read_bytes()))
    for other in (b, c):
        assert np.array_equal(a.rows.stated, other.rows.stated)
        assert np.array_equal(a.rows.correct, other.rows.correct)
        assert np.array_equal(a.rows.item_id, other.rows.item_id)
        assert [i.message().split(":", 1)[1] for i in a.report.issues] == [
            i.message().split(":", 1)[1] for i in other.report.issues
        ]
    assert b.name == "upload" and c.name == "upload"
    assert c.report.source == "upload.jsonl"


def test_gzip_over_the_cap_is_refused() -> None:
    bomb = gzip.compress(b"\n" * 100_000)
    with pytest.raises(CalibError) as err:
        gunzip_capped(bomb, "bomb.jsonl.gz", 1000)
    assert str(err.value) == (
        "bomb.jsonl.gz: decompresses to more than 1,000 bytes (0.00095 MB); refused, since a .gz that "
        "inflates past this cap may be a gzip bomb. If the file is genuine, raise the cap: on the dashboard "
        "with the environment variable CALIB_MAX_DECOMPRESSED_MB (in MB; restart the server after setting it), "
        "in Python with LoadOptions(max_decompressed_bytes=...); or decompress the file and load it uncompressed."
    )
    # the cap in MB as the variable counts it, and the variable the dashboard reads it from
    with pytest.raises(CalibError, match=r"more than 3,145,728 bytes \(3 MB\); refused.*CALIB_MAX_DECOMPRESSED_MB"):
        gunzip_capped(gzip.compress(b"\n" * (3 * 2**20 + 1)), "big.csv.gz", 3 * 2**20)
    assert gunzip_capped(gzip.compress(b"\n" * 1000), "ok.gz", 1000) == b"\n" * 1000  # at the cap: fine
    with pytest.raises(CalibError, match=r"bomb\.jsonl\.gz: decompresses to more than"):
        load("bomb.jsonl.gz", bomb, options=LoadOptions(max_decompressed_bytes=1000))
    with pytest.raises(CalibError, match=r"x\.jsonl\.gz: the gzip stream is truncated"):
        load("x.jsonl.gz", gzip.compress(b'{"confidence": 1, "correct": true}\n')[:-12])


def test_missing_file_and_folder_messages(tmp_path: Path) -> None:
    with pytest.raises(CalibError, match=r"nope\.jsonl: no such file"):
        load(tmp_path / "nope.jsonl")


def test_sniffing_sends_stated_files_to_the_stated_reader() -> None:
    for name in ("mixed.jsonl", "bom.jsonl", "crlf.jsonl", "nan.jsonl"):
        src = read_source(BAD / name)
        assert sniff_format(src.name, src.data) == "stated"
    assert load(BAD / "crlf.jsonl").report.format == "stated"


def test_dataset_table_counts_the_kept_rows() -> None:
    ds = load(BAD / "mixed.jsonl")
    values = [95, 60, 85] + [50 + i % 50 for i in range(13, 213)]
    right = [True, False, True] + [bool(i % 4) for i in range(13, 213)]
    expect: dict[float, list[int]] = {}
    for v, y in zip(values, right, strict=True):
        e = expect.setdefault(float(v), [0, 0])
        e[0] += 1
        e[1] += int(y)
    assert ds.table.value.tolist() == sorted(expect)
    assert ds.table.n.tolist() == [expect[v][0] for v in sorted(expect)]
    assert ds.table.correct.tolist() == [expect[v][1] for v in sorted(expect)]


def test_field_names_lists_the_first_objects_keys_one_level_deep() -> None:
    from calib.loading import field_names

    data = (b"\xef\xbb\xbf\n# not json\n[1, 2]\n"
            b'{"id": "a", "judge": {"conf": 90, "why": "x", "deep": {"k": 1}, "tags": [1]}, "ok": true}\n'
            b'{"other": 1}\n')
    assert field_names(data) == ["id", "judge", "judge.conf", "judge.why", "ok"]
    assert field_names(b"value,n,correct\n90,10,8\n") == []
    # only the first lines are looked at
    assert field_names(b"\n" * 60 + b'{"late": 1}\n') == []
    assert field_names(b"\n" * 60 + b'{"late": 1}\n', limit=100) == ["late"]


# ------------------------------------------------------------------ issue 22: input forms
def _rows(n: int = 30) -> list[str]:
    return [f'{{"id": "q{i}", "confidence": {50 + 5 * (i % 9)}, "correct": {"true" if i % 3 else "false"}}}'
            for i in range(n)]


def _same_rows(ds: object, lines: list[str]) -> None:
    """The dataset holds exactly the rows of ``lines`` (compared with json, not the reader)."""
    import json

    objs = [json.loads(t) for t in lines]
    rows = ds.rows  # type: ignore[attr-defined]
    assert list(rows.item_id) == [o["id"] for o in objs]
    assert list(rows.stated) == [o["confidence"] for o in objs]
    assert list(rows.correct) == [o["correct"] for o in objs]


@pytest.mark.parametrize(("bom", "codec"), [
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
])
def test_utf16_and_utf32_with_a_byte_order_mark_are_read(bom: bytes, codec: str) -> None:
    """PowerShell's ``>`` writes UTF-16-LE with a BOM and CRLF line ends."""
    lines = _rows()
    text = "\r\n".join(lines) + "\r\n"
    ds = load("ps.jsonl", bom + text.encode(codec))
    _same_rows(ds, lines)
    assert any(codec in n and "converted to UTF-8" in n for n in ds.report.notes), ds.report.notes
    counts = "value,n,correct\r\n90,10,9\r\n70,10,7\r\n"
    assert load("t.csv", bom + counts.encode(codec)).table.total == 20


def test_utf16_without_a_mark_or_with_bytes_not_utf16_is_refused_naming_utf16() -> None:
    text = "\n".join(_rows()) + "\n"
    with pytest.raises(CalibError, match=r"ps\.jsonl: looks like UTF-16 \(little-endian\) without a byte-order mark"):
        load("ps.jsonl", text.encode("utf-16-le"))
    with pytest.raises(CalibError, match=r"UTF-16 \(big-endian\)"):
        load("ps.jsonl", text.encode("utf-16-be"))
    lines = _rows(5)
    broken = ("\n".join(lines[:3]) + "\n").encode("utf-16-le") + b"\x00\xd8" + "\n".join(lines[3:]).encode("utf-16-le")
    with pytest.raises(CalibError, match=r"ps\.jsonl: line 4: bytes that are not UTF-16 \(utf-16-le\)"):
        load("ps.jsonl", b"\xff\xfe" + broken)


def test_cr_only_line_ends_are_read() -> None:
    lines = _rows()
    ds = load("mac.jsonl", "\r".join(lines).encode() + b"\r")
    _same_rows(ds, lines)
    assert any("bare carriage return" in n for n in ds.report.notes)
    assert load("t.csv", b"value,n,correct\r90,10,9\r70,10,7\r").table.total == 20


@pytest.mark.parametrize("values", [(1e308, -1e308, 1.7976931348623157e308), (1e308, 2.5e307, -4e307)])
def test_values_near_the_float_limit_raise_no_warning(values: tuple[float, ...], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A RuntimeWarning (overflow in 2 * v) reached the terminal with its source line; such
    values are outside every scale and dropped by line with that reason."""
    import json
    import warnings

    from calib.cli import main

    lines = _rows(100) + [json.dumps({"confidence": v, "correct": True}) for v in values]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = main(["audit", str(path), "--reps", "0"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Warning" not in out.err and "kept 100" in out.out
    assert f"{len(values)} outside the scale" in out.out


@pytest.mark.parametrize("given", ["-1e308,1e308", "-1.7e308,1.7e308", "0,inf", "-inf,0", "0,Infinity", "nan,1"])
def test_a_rescale_whose_span_is_not_finite_is_refused(given: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """--rescale=-1e308,1e308 overflowed in HI - LO (a RuntimeWarning, then nonsense);
    --rescale=0,inf was refused as "need LO < HI", which it is (issue 22: say finite)."""
    import warnings

    from calib.cli import main

    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(_rows(20)) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = main(["audit", str(path), f"--rescale={given}", "--reps", "0"])
    err = capsys.readouterr().err
    assert code == 2 and f"--rescale {given}: LO, HI and HI - LO must be finite numbers" in err, err


def test_a_json_array_of_records_is_read_record_by_record() -> None:
    """``json.dump(list_of_dicts)``: each record gets the per-line rules, named by record."""
    import json

    good = [json.loads(t) for t in _rows(30)]
    records: list[object] = [dict(g) for g in good]
    records[3] = {"id": "bad3", "confidence": "high", "correct": True}  # record 4
    records[8] = 17  # record 9: not an object
    text = json.dumps(records, indent=2)
    # record 7 names its confidence twice (json.load would keep the last one silently)
    text = text.replace('"id": "q6",', '"id": "q6", "confidence": 5,')
    ds = load("arr.json", text.encode())
    keep = [g for i, g in enumerate(good) if i not in (3, 6, 8)]
    assert list(ds.rows.item_id) == [g["id"] for g in keep]
    assert list(ds.rows.stated) == [g["confidence"] for g in keep]
    msgs = [i.message() for i in ds.report.issues]
    assert any(m.startswith("arr.json:record 4 [confidence]") and "'high'" not in m and "high" in m for m in msgs), msgs
    assert any(m.startswith("arr.json:record 7") and "twice" in m for m in msgs), msgs
    assert any(m.startswith("arr.json:record 9") for m in msgs), msgs
    assert ds.report.dropped == 3 and any("JSON array of 30 record(s)" in n for n in ds.report.notes)
    # option log-probs written as an array are read as option log-probs
    lp = [{"id": f"q{i}", "logprobs": [-0.1, -2.0 - i % 3], "gold": i % 2} for i in range(12)]
    ds = load("lp.json", json.dumps(lp).encode())
    assert ds.report.format == "logprobs" and ds.report.kept == 12


def test_a_json_array_is_under_the_line_limits_and_a_broken_one_keeps_its_records() -> None:
    import json

    good = [json.loads(t) for t in _rows(12)]
    long = dict(good[0], question="x" * 400)
    data = json.dumps(good[:5] + [long] + good[5:]).encode()
    ds = load("a.json", data, options=LoadOptions(max_line_chars=300))
    assert ds.report.kept == 12 and ds.report.issues[0].message().startswith("a.json:record 6: line is")
    with pytest.raises(CalibError, match=r"more than 11 lines"):
        load("a.json", json.dumps(good).encode(), options=LoadOptions(max_rows=11))
    cut = json.dumps(good)[:-30]  # the last record cut off: the others kept, it reported
    ds = load("cut.json", cut.encode())
    assert ds.report.kept == 11 and ds.report.issues[-1].message().startswith("cut.json:record 12")
    # JSON Lines whose first line is an array stay JSON Lines (the array is a bad line)
    lines = ["[1, 2]"] + _rows(12)
    ds = load("l.jsonl", ("\n".join(lines) + "\n").encode())
    assert ds.report.kept == 12 and ds.report.issues[0].message().startswith("l.jsonl:line 1")
    with pytest.raises(CalibError, match=r"empty"):
        load("e.json", b"[ ]\n")
    # the conversion's memory (about four copies of the text) is refused before it starts
    text = json.dumps(good).encode()
    with pytest.raises(CalibError, match=r"a\.json: a JSON array of .* over the .* MB allowed \(CALIB_MAX_PARSE_MB\)"):
        load("a.json", text, options=LoadOptions(max_parse_bytes=4 * len(text) - 1))
    assert load("a.json", text, options=LoadOptions(max_parse_bytes=4 * len(text) + 10**5)).report.kept == 12


def test_the_load_summary_writes_every_count_with_thousands_separators() -> None:
    """Issue 22: "dropped 1,000,000 (1000000 invalid JSON)": each reason's count too."""
    from calib.loadreport import LoadReport

    r = LoadReport(source="x.jsonl", format="stated", lines_read=1_234_567, kept=233_567, dropped=1_001_000,
                   dropped_by_reason={"invalid JSON": 1_000_000, "missing outcome": 1_000}, blank=1_000)
    assert r.summary() == ("read 1,234,567 lines: kept 233,567, dropped 1,001,000 (1,000,000 invalid JSON, "
                           "1,000 missing outcome), 1,000 blank")
