"""The stated-confidence JSONL reader: field detection, overrides, derived outcomes,
and the fast (pyarrow) path giving exactly what the per-line path gives."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calib.errors import CalibError
from calib.readers import stated
from calib.readers.base import LoadOptions, Source
from calib.rows import Judgments
from calib.scale import parse_rescale


def read(lines: list[bytes] | bytes, fast: bool = True, **opts: object) -> tuple[Judgments, object]:
    data = lines if isinstance(lines, bytes) else b"\n".join(lines) + b"\n"
    return stated.read(Source("t.jsonl", data), LoadOptions(**opts), fast=fast)  # type: ignore[arg-type]


def js(**kv: object) -> bytes:
    return json.dumps(kv).encode()


def same(data: bytes, **opts: object) -> object:
    """Read ``data`` on both paths; assert identical rows and report (or error)."""
    out = []
    for fast in (True, False):
        try:
            out.append(stated.read(Source("t.jsonl", data), LoadOptions(**opts), fast=fast))  # type: ignore[arg-type]
        except CalibError as exc:
            out.append(str(exc))
    a, b = out
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return a
    (r1, p1), (r2, p2) = a, b
    for f in ("stated", "prob", "correct", "line", "item_id", "group", "text"):
        x, y = getattr(r1, f), getattr(r2, f)
        assert (x is None) == (y is None), f
        if x is not None:
            assert x.dtype == y.dtype, f
            assert x.tolist() == y.tolist(), f
    assert r1.scale == r2.scale
    assert p1 == p2
    return p1


# ------------------------------------------------------------------ fields
@pytest.mark.parametrize(
    "conf_key", ["confidence", "Confidence", "conf", "p", "prob", "probability", "score", "stated_confidence",
                 "statedConfidence", "CONFIDENCE"],
)
def test_confidence_field_is_found_by_name(conf_key: str) -> None:
    rows, report = read([json.dumps({"id": "a", conf_key: 0.9, "correct": True}).encode(),
                         json.dumps({"id": "b", conf_key: 0.2, "correct": False}).encode()])
    assert rows.stated.tolist() == [0.9, 0.2]
    assert report.fields["confidence"] == conf_key
    assert f"confidence: {conf_key!r} (auto-detected)" in report.notes


def test_confidence_list_order_decides_between_two_candidates() -> None:
    # "score" is a grade here; "confidence" comes first in the list
    rows, report = read([js(score=3, confidence=80, correct=True), js(score=1, confidence=40, correct=False)])
    assert report.fields["confidence"] == "confidence" and rows.stated.tolist() == [80, 40]


def test_a_candidate_with_text_values_is_skipped() -> None:
    rows, report = read([js(p="high", prob=0.7, correct=True), js(p="low", prob=0.4, correct=False)])
    assert report.fields["confidence"] == "prob"


def test_nested_fields_are_found_and_named_by_path() -> None:
    lines = [js(id="a", metadata={"confidence": 90}, scores={"correct": "C"}),
             js(id="b", metadata={"confidence": 30}, scores={"correct": "I"})]
    rows, report = read(lines)
    assert report.fields["confidence"] == "metadata.confidence"
    assert report.fields["outcome"] == "scores.correct"
    assert rows.stated.tolist() == [90, 30] and rows.correct.tolist() == [True, False]
    assert same(b"\n".join(lines)) == report


@pytest.mark.parametrize(
    "key", ["correct", "is_correct", "isCorrect", "y", "label", "outcome", "human", "Correct"],
)
def test_outcome_field_is_found_by_name(key: str) -> None:
    rows, report = read([json.dumps({"confidence": 60, key: 1}).encode(),
                         json.dumps({"confidence": 50, key: 0}).encode()])
    assert rows.correct.tolist() == [True, False]
    assert report.fields["outcome"] == key


TRUE = [True, 1, 1.0, "true", "True", "TRUE", " yes ", "Yes", "y", "1", "C", "c", "correct", "pass", "T"]
FALSE = [False, 0, 0.0, "false", "False", "no", "NO", "n", "0", "I", "i", "incorrect", "wrong", "fail", "F"]


def test_outcome_tokens() -> None:
    lines = [js(confidence=50, correct=v) for v in TRUE + FALSE]
    rows, report = read(lines)
    assert rows.correct.tolist() == [True] * len(TRUE) + [False] * len(FALSE)
    assert report.dropped == 0
    for fast in (True, False):
        assert read(lines, fast=fast)[0].correct.tolist() == rows.correct.tolist()


@pytest.mark.parametrize("token", ["maybe", 2, -1, 0.5, "yess", "", [1], {"a": 1}])
def test_unknown_outcome_tokens_are_reported(token: object) -> None:
    lines = [js(id="a", confidence=50, correct=True), js(id="b", confidence=60, correct=token),
             js(id="c", confidence=70, correct=False)]
    rows, report = read(lines)
    assert rows.item_id.tolist() == ["a", "c"]
    (issue,) = report.issues
    assert (issue.line, issue.reason, issue.field) == (2, "unknown outcome token", "correct")
    assert "not an outcome" in issue.detail
    assert same(b"\n".join(lines)) == report


def test_outcome_derived_from_prediction_and_gold() -> None:
    lines = [
        js(id="1", confidence=90, answer="B", target="B"),
        js(id="2", confidence=80, answer=" b ", target="B"),     # trimmed, case ignored
        js(id="3", confidence=70, answer="C", target="B"),
        js(id="4", confidence=60, answer=3, target="3"),         # numbers compare as text
        js(id="5", confidence=50, answer=3.0, target=3),         # 3.0 is written 3
        js(id="6", confidence=40, answer="Paris", target="paris"),
        js(id="7", confidence=30, target="B"),                  # no prediction
    ]
    rows, report = read(lines)
    assert rows.item_id.tolist() == ["1", "2", "3", "4", "5", "6"]
    assert rows.correct.tolist() == [True, True, False, True, True, True]
    assert report.fields["prediction"] == "answer" and report.fields["gold"] == "target"
    assert report.fields["outcome"] is None
    assert any(n.startswith("outcome: derived: prediction 'answer'") and "case ignored" in n for n in report.notes)
    (issue,) = report.issues
    assert (issue.line, issue.reason, issue.field) == (7, "missing outcome", "answer")
    assert same(b"\n".join(lines)) == report


def test_gold_list_accepts_any_element() -> None:
    rows, _ = read([js(confidence=90, pred="NYC", gold=["New York", "nyc"]),
                    js(confidence=80, pred="LA", gold=["New York", "NYC"])])
    assert rows.correct.tolist() == [True, False]


def test_named_prediction_and_gold_keys() -> None:
    lines = [js(confidence=90, mine="A", truth="A", answer="Z"), js(confidence=20, mine="B", truth="A", answer="A")]
    rows, report = read(lines, extra={"pred_key": "mine", "gold_key": "truth"})
    assert rows.correct.tolist() == [True, False]
    assert report.fields["prediction"] == "mine" and "(given)" in " ".join(report.notes)


def test_given_keys_override_detection() -> None:
    lines = [js(qid="a", confidence=10, judge={"p": 0.9}, human="no", correct=True, model="m1"),
             js(qid="b", confidence=20, judge={"p": 0.3}, human="yes", correct=True, model="m2"),
             js(qid="c", confidence=30, judge={"p": 0.5}, human="yes", correct=False)]
    rows, report = read(lines, confidence_key="judge.p", outcome_key="human", group_key="model", id_key="qid")
    assert rows.stated.tolist() == [0.9, 0.3, 0.5]
    assert rows.correct.tolist() == [False, True, True]
    assert rows.item_id.tolist() == ["a", "b", "c"]
    assert rows.group is not None and rows.group.tolist() == ["m1", "m2", "(missing)"]
    assert report.fields == {"confidence": "judge.p", "outcome": "human", "prediction": None, "gold": None,
                             "group": "model", "id": "qid", "text": None}
    assert "confidence: 'judge.p' (given)" in report.notes
    assert "1 kept lines have no 'model' (group '(missing)')" in report.notes
    assert same(b"\n".join(lines), confidence_key="judge.p", outcome_key="human", group_key="model",
                id_key="qid") == report


def test_a_literal_dotted_key_wins_over_the_path() -> None:
    rows, _ = read([b'{"a.b": 0.8, "a": {"b": 0.1}, "correct": true}', b'{"a.b": 0.6, "correct": false}'],
                   confidence_key="a.b")
    assert rows.stated.tolist() == [0.8, 0.6]


def test_ids_numbers_escapes_and_lone_surrogates() -> None:
    lines = [b'{"id": 17, "confidence": 50, "correct": true}',
             b'{"id": "caf\\u00e9", "confidence": 50, "correct": true}',
             b'{"id": "x\\ud800y", "confidence": 50, "correct": true}',
             b'{"confidence": 50, "correct": true}']
    rows, _ = read(lines)
    # a lone surrogate is kept as the escape the file wrote (printable, and two differ)
    assert rows.item_id.tolist() == ["17", "café", "x\\ud800y", ""]
    same(b"\n".join(lines))


def test_question_text_is_kept_short() -> None:
    long_q = "é" * 500
    lines = [js(question="What is 2+2?", confidence=90, correct=True),
             js(question=long_q, confidence=80, correct=False), js(question=None, confidence=70, correct=True)]
    rows, report = read(lines)
    assert report.fields["text"] == "question"
    assert rows.text is not None
    assert rows.text[0] == "What is 2+2?"
    assert rows.text[1] == "é" * 199 + "…" and len(rows.text[1]) == 200
    assert rows.text[2] == ""
    same(b"\n".join(lines))


# -------------------------------------------------------------------- scale
def test_percent_strings_give_the_percent_scale() -> None:
    rows, report = read([js(confidence="85%", correct=True), js(confidence=" 40 %", correct=False),
                         js(confidence="100%", correct=True), js(confidence=70, correct=True)])
    assert rows.scale.name == "percent"
    assert rows.stated.tolist() == [85, 40, 100, 70]
    assert rows.prob.tolist() == pytest.approx([0.85, 0.40, 1.0, 0.70])
    assert 'forms: 1 on 0-100, 3 written as percentages ("85%"); every value shown on the percent scale' in report.notes
    assert report.forms == {"0-100": 1, "percent": 3}


def test_rescale_overrides_detection_and_reports_values_outside() -> None:
    lines = [js(id=str(i), confidence=v, correct=True) for i, v in enumerate([1, 3, 5, 7, 10, 11])]
    rows, report = read(lines, rescale=parse_rescale("0,10"))
    assert rows.scale.lo == 0 and rows.scale.hi == 10
    assert rows.prob.tolist() == pytest.approx([0.1, 0.3, 0.5, 0.7, 1.0])
    (issue,) = report.issues
    assert (issue.line, issue.reason) == (6, "outside the scale")
    assert "confidence 11 is outside the 0-10 scale [0, 10]" in issue.message()
    assert issue.preview == '{"id": "5", "confidence": 11, "correct": true}'


def test_detected_scale_is_stated_in_the_report() -> None:
    rows, report = read([js(confidence=v, correct=True) for v in (1, 2, 3, 4, 5)])
    assert rows.scale.name == "1-5" and report.scale == rows.scale.to_dict()
    assert rows.prob.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert any(n.startswith("scale: values from 1 to 5: assumed the 1-5 scale") for n in report.notes)


def test_numeric_strings_are_numbers() -> None:
    rows, report = read([js(confidence="0.9", correct=True), js(confidence=" .25 ", correct=False),
                         js(confidence="1e-1", correct=False)])
    assert rows.stated.tolist() == [0.9, 0.25, 0.1] and report.dropped == 0


@pytest.mark.parametrize("value", ['"nan"', '"inf"', '"1,5"', '"0x10"', '"٨٥"', '"5 5"', '""', "{}"])
def test_strings_that_are_not_plain_numbers_are_refused(value: str) -> None:
    _, report = read([b'{"confidence": 0.5, "correct": true}',
                      b'{"confidence": %s, "correct": true}' % value.encode()])
    (issue,) = report.issues
    assert (issue.line, issue.reason) == (2, "non-numeric confidence")


# ----------------------------------------------------------- path equivalence
def _random_file(rng: random.Random, n: int) -> bytes:
    """A file with many kinds of clean lines and a few bad ones."""
    scale = rng.choice([1, 100, 10])
    out = []
    for i in range(n):
        obj: dict[str, object] = {"id": rng.choice([f"q{i}", i, f"é{i}"]) if rng.random() < 0.05 else f"q{i}"}
        v: object = round(rng.random() * scale, rng.choice([0, 1, 3])) if scale != 1 else rng.random()
        if rng.random() < 0.02:
            v = rng.choice(["85%", "high", None, True, 1e300, -3, str(v)])
        obj["confidence"] = v
        obj["correct"] = rng.random() < 0.7 if rng.random() < 0.97 else rng.choice(["yes", "C", 1, "?", None])
        if rng.random() < 0.5:
            obj["question"] = rng.choice(["short", "x" * 300, "naïve ☃ " * 30, "quote \" and \\ slash"])
        if rng.random() < 0.3:
            obj["subject"] = rng.choice(["math", "law", 3])
        if rng.random() < 0.1:
            obj["meta"] = {"a": [1, {"b": None}], "c": rng.random()}
        line = json.dumps(obj, ensure_ascii=rng.random() < 0.5).encode()
        r = rng.random()
        if r < 0.01:
            line = line[: rng.randrange(len(line))]
        elif r < 0.015:
            line = b""
        elif r < 0.02:
            line = b'{"confidence": NaN, "correct": true, "x": Inf}'
        elif r < 0.025:
            line = line.replace(b'"confidence"', b'"confidence": 1, "confidence"', 1)
        out.append(line)
    sep = rng.choice([b"\n", b"\r\n"])
    return sep.join(out) + (sep if rng.random() < 0.7 else b"")


@pytest.mark.parametrize("seed", range(6))
def test_fast_and_per_line_paths_agree_on_random_files(seed: int) -> None:
    rng = random.Random(seed)
    data = _random_file(rng, 3000)
    # small chunks: many chunks, retries around bad lines, a few given up to the per-line path
    with mock.patch.object(stated, "CHUNK_BYTES", rng.choice([512, 4096, 1 << 20])):
        report = same(data, group_key="subject" if seed % 2 else None)
    assert not isinstance(report, str)


CORPUS = sorted((Path(__file__).parent / "data" / "bad").glob("*.jsonl"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_fast_and_per_line_paths_agree_on_the_bad_input_corpus(path: Path) -> None:
    same(path.read_bytes())
    same(path.read_bytes(), strict=True)


@pytest.mark.parametrize("seed", range(3))
def test_fast_and_per_line_paths_agree_on_clean_random_files(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 4000
    lines = []
    for i in range(n):
        obj: dict[str, object] = {"id": f"item-{i}", "confidence": int(rng.integers(0, 101)) if seed != 1
                                  else float(rng.random()), "correct": bool(rng.random() < 0.6)}
        if seed == 2:
            obj["question"] = "Où est la gare ? " * int(rng.integers(1, 20))
            obj["subject"] = str(rng.choice(["a", "b", "c"]))
        lines.append(json.dumps(obj, ensure_ascii=bool(seed % 2)).encode())
    with mock.patch.object(stated, "CHUNK_BYTES", 20_000):
        report = same(b"\n".join(lines) + b"\n", group_key="subject" if seed == 2 else None)
    assert not isinstance(report, str) and report.kept == n and report.dropped == 0


def test_fast_path_gives_up_after_the_retry_budget() -> None:
    lines = [js(id=f"q{i}", confidence=50, correct=True) if i % 7 else b'{"id": 1, "confidence": 50}'
             for i in range(400)]
    with mock.patch.object(stated.chunks, "MAX_RETRIES", 2):
        report = same(b"\n".join(lines))
    assert not isinstance(report, str) and report.kept == 400 - 58


def test_deep_nesting_never_reaches_pyarrow() -> None:
    deep = b'{"confidence": 50, "correct": true, "x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    fine = b'{"confidence": 60, "correct": true, "x": ' + b"[" * 300 + b"]" * 300 + b"}"
    lines = [js(confidence=40, correct=False), deep, fine]
    report = same(b"\n".join(lines))
    assert not isinstance(report, str)
    assert [(i.line, i.reason) for i in report.issues] == [(2, "invalid JSON")]
    assert report.kept == 2


def test_tokens_pyarrow_accepts_but_json_does_not() -> None:
    lines = [js(confidence=40, correct=False),
             b'{"confidence": 50, "correct": true, "x": Inf}',
             b'{"confidence": 50, "correct": true, "x": -NaN}',
             b'{"confidence": 50, "correct": true, "x": NaN}',       # Python reads it; unused field: kept
             b'{"confidence": 50, "correct": true, "x": Infinity}',  # same
             b'{"confidence": 50, "correct": true} {"confidence": 1}',
             b'null',
             b'{"confidence": 50, "correct": true, "x": "Information"}']
    report = same(b"\n".join(lines))
    assert not isinstance(report, str)
    assert [(i.line, i.reason) for i in report.issues] == [
        (2, "invalid JSON"), (3, "invalid JSON"), (6, "invalid JSON"), (7, "not a JSON object")]
    assert report.kept == 4


def test_duplicate_used_keys_are_reported_on_both_paths() -> None:
    # a silent choice of the last value was the old behaviour: the line is now reported
    rows, report = read([b'{"confidence": 10, "confidence": 90, "correct": true}', js(confidence=20, correct=False)])
    assert rows.stated.tolist() == [20]
    assert [(i.line, i.reason, i.field) for i in report.issues] == [(1, "duplicate key", "confidence")]
    same(b'{"confidence": 10, "confidence": 90, "correct": true}\n' + js(confidence=20, correct=False))
    # an unused key twice, or the name inside a string, is no problem
    rows, report = read([b'{"x": 1, "x": 2, "confidence": 90, "correct": true, "q": "\\"confidence\\""}'])
    assert rows.stated.tolist() == [90] and not report.issues


def test_large_numbers_in_used_fields() -> None:
    lines = [js(id=12345678901234567890, confidence=50, correct=True),
             js(id="b", confidence=50, correct=12345678901234567890),
             js(id="c", confidence=9007199254740993, correct=True), js(id="d", confidence=70, correct=False)]
    report = same(b"\n".join(lines), rescale=parse_rescale("0,100"))
    assert not isinstance(report, str)
    assert [(i.line, i.reason) for i in report.issues] == [(2, "unknown outcome token"), (3, "outside the scale")]
    assert "12345678901234567890, not an outcome" in report.issues[0].detail


# ------------------------------------------------------------- hypothesis
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8) | st.sampled_from(["85%", " 0.5 ", "yes", "C", "I", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
    max_leaves=6,
)
_objects = st.dictionaries(
    st.sampled_from(["id", "confidence", "correct", "question", "answer", "target", "x", "meta"]), _values, max_size=6,
)


def _render(obj: dict[str, object]) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


_line = st.one_of(
    _objects.map(_render),
    st.builds(lambda c, y: _render({"id": "k", "confidence": c, "correct": y}),
              st.integers(0, 100) | st.floats(0, 1), st.booleans()),
    st.binary(max_size=30),
    st.sampled_from([b"", b"  ", b"\r", b"\xef\xbb\xbf{}", b"null", b"[1]", b"{", b'{"confidence": Inf}',
                     b'{"confidence": 5, "correct": true} x', b"\xff\xfe", b'{"a": -NaN}']),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=25), st.booleans(), st.sampled_from([64, 300, 1 << 20]))
def test_arbitrary_lines_never_crash_and_every_line_is_accounted_for(
    lines: list[bytes], newline_at_end: bool, chunk: int,
) -> None:
    # a file that surely has a usable line, plus arbitrary ones
    lines = [b'{"confidence": 0.5, "correct": true}', *lines, b'{"confidence": 0.25, "correct": false}']
    data = b"\n".join(lines) + (b"\n" if newline_at_end else b"")
    with mock.patch.object(stated, "CHUNK_BYTES", chunk):
        report = same(data)
    if isinstance(report, str):  # a CalibError, same on both paths
        assert report.startswith("t.jsonl: ")
        return
    expected_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    assert report.lines_read == expected_lines
    assert report.kept + report.dropped + report.blank == report.lines_read
    assert sum(report.dropped_by_reason.values()) == report.dropped


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=20))
def test_random_bytes_raise_only_calib_errors(lines: list[bytes]) -> None:
    try:
        rows, report = read(b"\n".join(lines))
    except CalibError as exc:
        assert str(exc).startswith("t.jsonl: ")
        return
    assert report.kept == len(rows) and report.kept + report.dropped + report.blank == report.lines_read


def test_values_read_exactly_as_python_reads_them() -> None:
    # floats with many digits: pyarrow's parse must equal Python's json to the bit
    rng = random.Random(7)
    vals = [rng.random() * 10 ** rng.randint(-5, 0) for _ in range(2000)]
    vals += [float(f"0.{rng.randint(0, 10**20):020d}") for _ in range(500)]
    lines = [b'{"confidence": %s, "correct": true}' % repr(v).encode() for v in vals]
    lines += [b'{"confidence": 0.%se0, "correct": false}' % str(rng.randint(0, 10**30)).encode() for _ in range(200)]
    rows, report = read(lines)
    expect = [float(json.loads(line)["confidence"]) for line in lines]
    assert report.dropped == 0
    assert rows.stated.tolist() == expect
    assert all(math.isfinite(v) for v in rows.stated)
    assert np.array_equal(rows.stated, read(lines, fast=False)[0].stated)


_mostly_good = st.builds(
    lambda c, y, extra, cut: (lambda b: b[:cut] if cut is not None else b)(_render({"confidence": c, "correct": y, **extra})),
    st.one_of(st.integers(0, 100), st.sampled_from([50.5, "70", "80%", None, True, float("nan"), 1e308])),
    st.one_of(st.booleans(), st.sampled_from([0, 1, "yes", "I", 2, None, 1.0])),
    st.dictionaries(st.sampled_from(["id", "question", "x", "meta", "subject"]), _values, max_size=3),
    st.none() | st.none() | st.none() | st.integers(0, 40),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_mostly_good | _line, min_size=1, max_size=40), st.sampled_from([64, 256, 1 << 20]))
def test_mostly_valid_files_read_the_same_on_both_paths(lines: list[bytes], chunk: int) -> None:
    data = b"\n".join([b'{"confidence": 50, "correct": true}', *lines]) + b"\n"
    with mock.patch.object(stated, "CHUNK_BYTES", chunk):
        report = same(data, group_key="subject")
    if not isinstance(report, str):
        assert report.kept + report.dropped + report.blank == report.lines_read == data.count(b"\n")


def test_integer_literals_beyond_pythons_digit_limit() -> None:
    # Python 3.11 refuses int literals over 4,300 digits (a ValueError, not a JSONDecodeError)
    # and pyarrow reads them as inf; JSON has no limit: such a number is a float, and in a
    # field that is not used it does not cost the line
    lines = [js(confidence=50, correct=True), b'{"confidence": ' + b"9" * 5000 + b', "correct": true}',
             b'{"confidence": ' + b"9" * 400 + b', "correct": true}',
             b'{"confidence": 60, "correct": false, "x": ' + b"1" * 5000 + b"}"]
    report = same(b"\n".join(lines))
    assert not isinstance(report, str)
    assert [(i.line, i.reason) for i in report.issues] == [(2, "NaN/Infinity"), (3, "NaN/Infinity")]
    assert report.issues[0].detail == "confidence is Infinity, not a finite number"
    assert report.issues[1].detail.startswith("confidence is 999999") and report.kept == 2


# ------------------------------------------------------------------ issue 22: bad lines first
@pytest.mark.parametrize("fast", [False, True])
def test_every_valid_row_is_kept_after_more_bad_lines_than_the_sample_scans(fast: bool) -> None:
    """1M bad lines followed by 200 good ones were refused ("no JSON object in the first
    20,000 non-blank lines"): the field sampler stopped before the first object."""
    from calib.readers.stated.fields import SAMPLE_LINES

    bad = SAMPLE_LINES + 500
    good = [{"id": f"q{i}", "confidence": 50 + 10 * (i % 5), "correct": i % 2 == 0} for i in range(30)]
    for junk in (b"not json\n", b"x <html>\n", b"[1, 2\n"):  # "x": no JSON value starts so
        data = junk * bad + b"".join(json.dumps(g).encode() + b"\n" for g in good)
        rows, report = stated.read(Source("late.jsonl", data), LoadOptions(), fast=fast)
        assert list(rows.item_id) == [g["id"] for g in good]
        assert list(rows.stated) == [g["confidence"] for g in good]
        assert list(rows.line) == list(range(bad + 1, bad + 31))
        assert report.kept == 30 and report.dropped == bad  # type: ignore[attr-defined]
        assert report.dropped_by_reason == {"invalid JSON": bad}  # type: ignore[attr-defined]
        assert [i.line for i in report.issues] == list(range(1, 21))  # type: ignore[attr-defined]
    with pytest.raises(CalibError, match=rf"no JSON object in its {bad:,} lines; commonest problem in the first 20,000: invalid JSON"):
        stated.read(Source("none.jsonl", b"not json\n" * bad), LoadOptions(), fast=fast)
