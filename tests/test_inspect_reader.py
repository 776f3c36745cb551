"""Inspect AI log reader, checked on logs written by inspect_ai 0.3.285 and 0.3.180.

The expected outcome and confidence of every sample are read here straight from the
archive (zipfile + zstandard, local headers parsed by hand) or the JSON, without the
reader's code.
"""

from __future__ import annotations

import copy
import io
import json
import math
import re
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
import zstandard

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers import inspect as inspect_reader
from calib.readers.base import LoadOptions, Source
from calib.scale import parse_rescale
from tests.damage import mutations

DATA = Path(__file__).parent / "data"
NEW = DATA / "inspect-0.3.285"
JSON_EVAL = next(NEW.glob("*calib-mc-json*.eval"))
JSON_JSON = next(NEW.glob("*calib-mc-json*.json"))
BUILTIN_EVAL = next(NEW.glob("*calib-mc-builtin*.eval"))
BUILTIN_JSON = next(NEW.glob("*calib-mc-builtin*.json"))
OLD_EVAL = next((DATA / "inspect-0.3.180-deflate").glob("*.eval"))
JSON_LOGS = [JSON_EVAL, JSON_JSON, OLD_EVAL]


def unzip(path: Path) -> dict[str, bytes]:
    """Every member, zstd (method 93) members decompressed from their raw bytes."""
    data = path.read_bytes()
    zf = zipfile.ZipFile(io.BytesIO(data))
    out = {}
    for info in zf.infolist():
        if info.compress_type == 93:
            off = info.header_offset
            nlen, elen = struct.unpack("<HH", data[off + 26:off + 30])
            raw = data[off + 30 + nlen + elen: off + 30 + nlen + elen + info.compress_size]
            out[info.filename] = zstandard.ZstdDecompressor().decompress(raw, max_output_size=info.file_size)
        else:
            out[info.filename] = zf.read(info)
    return out


def samples_of(path: Path) -> list[dict]:
    if path.suffix == ".json":
        return json.loads(path.read_text())["samples"]
    members = unzip(path)
    return [json.loads(members[n]) for n in sorted(members) if n.startswith("samples/")]


def letter_logprob(sample: dict, letter: str | None) -> float | None:
    """The logprob of the answer-letter token: the token equal to the letter that
    carries alternatives over several letters in its top_logprobs."""
    if letter is None:
        return None
    for tok in sample["output"]["choices"][0]["logprobs"]["content"]:
        if tok["token"] == letter and len(tok.get("top_logprobs") or []) > 1:
            return tok["logprob"]
    return None


def by_id(rows) -> dict[str, tuple[float, bool]]:  # type: ignore[no-untyped-def]
    return {i: (float(s), bool(c)) for i, s, c in zip(rows.item_id, rows.stated, rows.correct, strict=True)}


@pytest.mark.parametrize("path", JSON_LOGS, ids=lambda p: f"{p.parent.name}{p.suffix}")
def test_every_sample_of_the_json_task(path: Path) -> None:
    ds = load(path)
    got = by_id(ds.rows)
    raw = samples_of(path)
    assert len(raw) == 40
    expected_missing = []
    for s in raw:
        score = s["scores"]["json_letter"]
        conf = score["metadata"]["confidence"]
        if conf is None:
            expected_missing.append(s["id"])
            assert s["id"] not in got
            continue
        assert got[s["id"]] == (conf, score["value"] == "C")
    assert expected_missing == ["q039"]
    assert ds.report.kept == 39 and ds.report.dropped_by_reason == {"no confidence": 1}
    (issue,) = ds.report.issues
    assert issue.sample_id == "q039" and issue.line == 40 and "I think it is C." in issue.detail
    assert ds.table.scale.name == "0-100"
    assert set(ds.rows.group) == {s["metadata"]["subject"] for s in raw if s["id"] != "q039"}
    header_acc = (json.loads(unzip(path)["header.json"]) if path.suffix == ".eval"
                  else json.loads(path.read_text()))["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    assert sum(s["scores"]["json_letter"]["value"] == "C" for s in raw) / 40 == header_acc
    assert any(f"equals the log's own accuracy {header_acc:.4f}" in n for n in ds.report.notes)


@pytest.mark.parametrize("path", JSON_LOGS + [BUILTIN_EVAL, BUILTIN_JSON], ids=lambda p: f"{p.stem[-12:]}{p.suffix}")
def test_answer_letter_logprob_mode(path: Path) -> None:
    ds = load(path, options=LoadOptions(confidence_key="logprob"))
    got = by_id(ds.rows)
    for s in samples_of(path):
        score = next(iter(s["scores"].values()))
        lp = letter_logprob(s, score.get("answer"))
        if lp is None:
            assert s["id"] not in got
            continue
        stated, ok = got[s["id"]]
        assert stated == pytest.approx(math.exp(lp), rel=1e-12)
        assert ok == (score["value"] == "C")
        conf = (score.get("metadata") or {}).get("confidence")
        if conf is not None:  # the scripted model's letter probability is its stated confidence
            assert stated == pytest.approx(conf / 100, rel=1e-9)
    assert ds.rows.scale.name == "0-1" and "exp(logprob)" in ds.rows.scale.how


def test_stated_with_logprob_fallback() -> None:
    ds = load(JSON_JSON, options=LoadOptions(confidence_key="stated|logprob"))
    assert ds.report.kept == 39  # q039's answer was never parsed, so there is no answer letter either
    assert ds.rows.scale.name == "0-100"


@pytest.mark.parametrize("path", [BUILTIN_EVAL, BUILTIN_JSON], ids=[".eval", ".json"])
def test_outcomes_without_confidence_are_explained(path: Path) -> None:
    with pytest.raises(CalibError) as err:
        load(path)
    msg = str(err.value)
    assert "has outcomes for 40 scored samples (scorer 'choice') but no confidence" in msg
    assert "confidence_key='logprob'" in msg and 'metadata={"confidence": 85}' in msg
    report = err.value.report  # type: ignore[attr-defined]
    assert report.dropped_by_reason == {"no confidence": 40} and report.kept == 0
    ids = [s["id"] for s in samples_of(path)]
    assert [i.sample_id for i in report.issues] == ids[:20]  # 20 examples kept, all 40 counted


def test_truncated_eval_names_the_member_it_ends_in(tmp_path: Path) -> None:
    data = JSON_EVAL.read_bytes()
    cut = len(data) // 2
    infos = sorted(zipfile.ZipFile(JSON_EVAL).infolist(), key=lambda i: i.header_offset)
    inside = next(i for i in reversed(infos) if i.header_offset < cut)
    p = tmp_path / JSON_EVAL.name
    p.write_bytes(data[:cut])
    with pytest.raises(CalibError, match=rf"archive is incomplete .*ends inside {inside.filename}"):
        load(p)


def test_truncated_json_log_names_line_and_sample(tmp_path: Path) -> None:
    text = JSON_JSON.read_text()
    start = text.index('"id": "q017"')
    cut = text.index('"completion"', start)
    p = tmp_path / JSON_JSON.name
    p.write_text(text[:cut])
    with pytest.raises(CalibError, match=rf"line {text[:cut].count(chr(10)) + 1}, .*sample that starts before it is q017"):
        load(p)


@pytest.mark.parametrize("path", [JSON_EVAL, OLD_EVAL], ids=["zstd", "deflate"])
def test_corrupt_member_is_named(tmp_path: Path, path: Path) -> None:
    data = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo("samples/q005_epoch_1.json")
    nlen, elen = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    start = info.header_offset + 30 + nlen + elen
    for j in range(start + 40, start + 60):
        data[j] ^= 0x5A
    p = tmp_path / path.name
    p.write_bytes(bytes(data))
    # one unreadable sample is a bad sample, named with its member; the others are kept
    ds = load(p)
    (issue,) = [i for i in ds.report.issues if i.reason == "unreadable sample"]
    assert issue.sample_id == "q005"
    assert re.search(r"member samples/q005_epoch_1.json is (corrupt|not valid JSON)", issue.detail)
    assert ds.report.dropped_by_reason["unreadable sample"] == 1
    assert "q005" not in ds.rows.item_id.tolist() and ds.report.kept == ds.report.lines_read - ds.report.dropped


def _zip(members: dict[str, bytes], zstd_members: dict[str, tuple[bytes, int]] | None = None) -> bytes:
    """A zip; ``zstd_members`` maps name -> (zstd bytes, size to declare), written as
    method 93 by patching a stored entry (zipfile cannot write zstd before 3.14)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
        for name, (blob, _) in (zstd_members or {}).items():
            zf.writestr(zipfile.ZipInfo(name), blob, compress_type=zipfile.ZIP_STORED)
    data = bytearray(buf.getvalue())
    for name, (blob, declared) in (zstd_members or {}).items():
        crc = zlib.crc32(zstandard.ZstdDecompressor().decompressobj().decompress(blob))
        local = data.index(b"PK\x03\x04")
        while data[local + 30: local + 30 + len(name)] != name.encode():
            local = data.index(b"PK\x03\x04", local + 4)
        central = data.index(b"PK\x01\x02")
        while data[central + 46: central + 46 + len(name)] != name.encode():
            central = data.index(b"PK\x01\x02", central + 4)
        # method, CRC and uncompressed size sit at these offsets of the two headers
        for base, (m, c, u) in ((local, (8, 14, 22)), (central, (10, 16, 24))):
            struct.pack_into("<H", data, base + m, 93)
            struct.pack_into("<I", data, base + c, crc)
            struct.pack_into("<I", data, base + u, declared)
    return bytes(data)


def _one_sample() -> bytes:
    return json.dumps(json.loads(JSON_JSON.read_text())["samples"][0]).encode()


def test_zip_bombs_are_refused() -> None:
    opts = LoadOptions(max_decompressed_bytes=1_000_000)
    header = json.dumps({"eval": {"task": "t"}, "status": "success"}).encode()
    bomb = _zip({"header.json": header, "samples/x_epoch_1.json": b" " * 5_000_000})
    with pytest.raises(CalibError, match=r"declares 5,000,000 bytes decompressed, over the 1,000,000 limit"):
        inspect_reader.read(Source("b.eval", bomb), opts)
    # a zstd member that lies about its size is stopped while decompressing
    blob = zstandard.ZstdCompressor().compress(b" " * 5_000_000)
    liar = _zip({"header.json": header}, {"samples/x_epoch_1.json": (blob, 100)})
    with pytest.raises(CalibError, match=r"samples/x_epoch_1.json decompresses to more than 1,000,000 bytes"):
        inspect_reader.read(Source("l.eval", liar), opts)
    # many members each under the cap still hit the total
    pad = {f"samples/s{i}_epoch_1.json": json.dumps({"id": f"s{i}", "pad": " " * 400_000}).encode()
           for i in range(4)}
    many = _zip({"header.json": header, **pad})
    with pytest.raises(CalibError, match=r"archive decompresses to more than 1,000,000 bytes"):
        inspect_reader.read(Source("m.eval", many), opts)


def test_a_hand_made_zstd_archive_reads() -> None:
    sample = _one_sample()
    header = json.dumps({"eval": {"task": "t", "scorers": [{"name": "json_letter"}]}, "status": "success"}).encode()
    blob = zstandard.ZstdCompressor().compress(sample)
    data = _zip({}, {"header.json": (zstandard.ZstdCompressor().compress(header), len(header)),
                     "samples/q000_epoch_1.json": (blob, len(sample))})
    rows, report = inspect_reader.read(Source("h.eval", data), LoadOptions())
    s = json.loads(sample)
    assert rows.item_id.tolist() == [s["id"]]
    assert rows.stated.tolist() == [s["scores"]["json_letter"]["metadata"]["confidence"]]


def test_a_zip_that_is_not_a_log() -> None:
    with pytest.raises(CalibError, match="a zip archive but not an Inspect AI .eval log"):
        inspect_reader.read(Source("x.eval", _zip({"readme.txt": b"hi"})), LoadOptions())
    with pytest.raises(CalibError, match="not a zip archive"):
        inspect_reader.read(Source("x.eval", b"hello"), LoadOptions())


def _log_with(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    log = json.loads(JSON_JSON.read_text())
    log["samples"] = log["samples"][:8]
    edit(log["samples"])
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(log))
    return p


def test_confidence_in_the_completion_text_and_bad_samples(tmp_path: Path) -> None:
    def edit(ss: list[dict]) -> None:
        for s in ss:
            s["scores"]["json_letter"]["metadata"] = {}
        ss[0]["output"]["completion"] = "ANSWER: B\nConfidence: 85%"
        ss[1]["output"]["completion"] = 'Sure. {"answer": "A", "confidence": "60%"}'
        ss[2]["output"]["completion"] = "I am 70% confident it is D."
        ss[3]["scores"]["json_letter"]["value"] = "P"
        ss[4]["error"] = {"message": "model timed out"}
        ss[5]["scores"]["json_letter"]["metadata"] = {"confidence": "high"}
        ss[6]["output"]["completion"] = "D"
        ss[7]["scores"] = {}

    ds = load(_log_with(tmp_path, edit))
    assert ds.rows.stated.tolist() == [85.0, 60.0, 70.0]
    assert ds.rows.scale.name == "percent"
    reasons = {i.sample_id: i.reason for i in ds.report.issues}
    assert reasons == {"q003": "outcome not binary", "q004": "sample error", "q005": "confidence not a number",
                       "q006": "no confidence", "q007": "not scored"}
    assert any("completion text on 2" in n and "completion JSON on 1" in n for n in ds.report.notes)
    assert ds.report.kept + ds.report.dropped == ds.report.lines_read == 8
    with pytest.raises(CalibError, match=r"line 4 \(sample q003\) \[scores.json_letter.value\]: score value 'P'"):
        load(_log_with(tmp_path, edit), options=LoadOptions(strict=True))


def test_outcome_values_booleans_numbers_and_named_keys(tmp_path: Path) -> None:
    def edit(ss: list[dict]) -> None:
        vals = [True, False, 1, 0, 1.0, "correct", "I", "C"]
        for s, v in zip(ss, vals, strict=True):
            s["scores"]["json_letter"]["value"] = v
        ss[7]["scores"]["other"] = {"value": {"exact": 0, "fuzzy": 1}, "metadata": {"confidence": 42}}

    p = _log_with(tmp_path, edit)
    assert load(p).rows.correct.tolist() == [True, False, True, False, True, True, False, True]
    one = load(p, options=LoadOptions(outcome_key="other.fuzzy"))
    assert one.rows.item_id.tolist() == ["q007"] and one.rows.correct.tolist() == [True]
    assert one.rows.stated.tolist() == [42.0]


def test_epochs_and_scale_limits(tmp_path: Path) -> None:
    def edit(ss: list[dict]) -> None:
        ss[1]["id"], ss[1]["epoch"] = ss[0]["id"], 2
        ss[2]["scores"]["json_letter"]["metadata"]["confidence"] = 150

    ds = load(_log_with(tmp_path, edit), options=LoadOptions(rescale=parse_rescale("0,100")))
    assert ds.rows.item_id[:2].tolist() == ["q000#1", "q000#2"]
    assert ds.report.dropped_by_reason == {"outside the scale": 1}


def test_sniffed_as_inspect() -> None:
    for p in JSON_LOGS + [BUILTIN_EVAL, BUILTIN_JSON]:
        assert sniff_format(p.name, p.read_bytes()) == "inspect"


def test_copy_of_a_sample_keeps_the_log_untouched() -> None:
    # the reader must not mutate what it parses (guards a shared-dict bug class)
    log = json.loads(JSON_JSON.read_text())
    before = copy.deepcopy(log)
    inspect_reader.read(Source("x.json", json.dumps(log).encode()), LoadOptions())
    assert log == before


@pytest.mark.parametrize("path", [JSON_EVAL, OLD_EVAL, BUILTIN_JSON], ids=["zstd", "deflate", "json"])
def test_damaged_logs_raise_only_calib_errors(path: Path) -> None:
    for i, data in enumerate(mutations(path.read_bytes(), seed=7, count=40)):
        for key in (None, "logprob"):
            try:
                inspect_reader.read(Source(path.name, data), LoadOptions(confidence_key=key))
            except CalibError:
                pass
            except Exception as exc:  # pragma: no cover - the failure message names the case
                pytest.fail(f"mutation {i} ({key}) raised {type(exc).__name__}: {exc}")


def test_logprob_mode_without_logprobs_is_explained(tmp_path: Path) -> None:
    log = json.loads(BUILTIN_JSON.read_text())
    for s in log["samples"]:
        s["output"]["choices"][0]["logprobs"] = None
    p = tmp_path / "nolp.json"
    p.write_text(json.dumps(log))
    with pytest.raises(CalibError, match=r"no sample has a token log-probability for its answer letter .*logprobs=True"):
        load(p, options=LoadOptions(confidence_key="logprob"))
