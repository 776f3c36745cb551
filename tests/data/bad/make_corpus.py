"""Write the bad-input corpus for the stated-confidence reader (tests/test_loading.py).

One file per case of issue 2, point 2, plus a mixed file. Every valid line carries an
``id`` so that the tests can list, by hand, which ids must be kept. Run from anywhere:
``python tests/data/bad/make_corpus.py``; the files are committed.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def ok(i: str, conf: object = 80, correct: object = "true") -> bytes:
    return f'{{"id": "{i}", "confidence": {conf}, "correct": {correct}}}'.encode()


CASES: dict[str, bytes] = {
    "invalid_json.jsonl": b"\n".join([
        ok("a1"), b'{"id": "bad", "confidence": 70, "correct": true', ok("a3", 90, "false"),
        b'{"id": "bad2" "confidence": 70}', ok("a5", 60),
    ]) + b"\n",
    "not_object.jsonl": b"\n".join([
        ok("b1"), b"[1, 2, 3]", b'"just a string"', ok("b4", 40, "false"), b"null", b"42", ok("b7", 100),
    ]) + b"\n",
    "missing_confidence.jsonl": b"\n".join([
        ok("c1"), b'{"id": "bad", "correct": true}', b'{"id": "bad2", "confidence": null, "correct": false}',
        ok("c4", 70, "false"), ok("c5", 90),
    ]) + b"\n",
    "non_numeric.jsonl": b"\n".join([
        ok("d1"), b'{"id": "bad", "confidence": "very sure", "correct": true}',
        b'{"id": "bad2", "confidence": true, "correct": true}', b'{"id": "bad3", "confidence": [90], "correct": true}',
        ok("d5", 50, "false"), ok("d6", '"75"'),
    ]) + b"\n",
    # 200 lines on 0-100, one at 150 and one at -5: the scale stays 0-100 (1% rule)
    "outside_scale.jsonl": b"\n".join(
        [ok(f"e{i}", i % 101, "true" if i % 3 else "false") for i in range(1, 101)]
        + [b'{"id": "bad", "confidence": 150, "correct": true}']
        + [ok(f"e{i}", i % 101, "true" if i % 2 else "false") for i in range(102, 201)]
        + [b'{"id": "bad2", "confidence": -5, "correct": false}']
    ) + b"\n",
    "unknown_outcome.jsonl": b"\n".join([
        ok("f1", 80, '"yes"'), b'{"id": "bad", "confidence": 70, "correct": "maybe"}', ok("f3", 90, '"C"'),
        b'{"id": "bad2", "confidence": 70, "correct": 2}', ok("f5", 60, '"I"'), ok("f6", 30, "0"),
        b'{"id": "bad3", "confidence": 70}',
    ]) + b"\n",
    "nan.jsonl": b"\n".join([
        ok("g1"), b'{"id": "bad", "confidence": NaN, "correct": true}', ok("g3", 60, "false"),
        b'{"id": "bad2", "confidence": -NaN, "correct": true}',
    ]) + b"\n",
    "infinity.jsonl": b"\n".join([
        ok("h1"), b'{"id": "bad", "confidence": Infinity, "correct": true}', ok("h3", 60, "false"),
        b'{"id": "bad2", "confidence": -Infinity, "correct": false}', b'{"id": "bad3", "confidence": 1e400, "correct": true}',
        ok("h6", 95),
    ]) + b"\n",
    "non_utf8.jsonl": b"\n".join([
        ok("i1"), b'{"id": "caf\xe9", "confidence": 70, "correct": true}', ok("i3", 60, "false"),
        b'{"id": "\xff\xfe", "confidence": 70, "correct": true}', ok("i5", 90),
    ]) + b"\n",
    "truncated_last_line.jsonl": b"\n".join([
        ok("j1"), ok("j2", 60, "false"), ok("j3", 90), b'{"id": "bad", "confidence": 7',
    ]),
    "blank_lines.jsonl": b"\n".join([
        b"", ok("k1"), b"", b"   ", ok("k5", 60, "false"), b"\t", b"", ok("k8", 90),
    ]) + b"\n\n",
    "bom.jsonl": b"\xef\xbb\xbf" + b"\n".join([ok("l1"), ok("l2", 60, "false"), ok("l3", 90)]) + b"\n",
    "crlf.jsonl": b"\r\n".join([ok("m1"), ok("m2", 60, "false"), ok("m3", 90), b"", ok("m5", 70)]) + b"\r\n",
    "empty.jsonl": b"",
    "only_blank.jsonl": b"\n  \n\r\n\n",
    "one_class.jsonl": b"\n".join([ok("n1", 90), ok("n2", 80), ok("n3", 100), ok("n4", 90)]) + b"\n",
    "single_confidence.jsonl": b"\n".join([ok("o1", 90), ok("o2", 90, "false"), ok("o3", 90), ok("o4", 90, "false")]) + b"\n",
    "no_valid_rows.jsonl": b"\n".join([
        b'{"id": "bad", "confidence": NaN, "correct": true}', b"oops",
        b'{"id": "bad2", "confidence": NaN, "correct": false}', b'{"id": "bad3", "confidence": 1e999, "correct": false}',
    ]) + b"\n",
    "no_confidence_field.jsonl": b"\n".join([
        b'{"id": "x1", "correct": true}', b'{"id": "x2", "certain": 80, "correct": false}',
    ]) + b"\n",
    "no_outcome_field.jsonl": b"\n".join([
        b'{"id": "x1", "confidence": 80, "verdict": "maybe"}', b'{"id": "x2", "confidence": 70}',
    ]) + b"\n",
    "mixed.jsonl": b"\xef\xbb\xbf" + b"\r\n".join([
        ok("p1", 95),                                                  # 1
        b"",                                                           # 2 blank
        b"{not json}",                                                 # 3 invalid JSON
        b"[95, true]",                                                 # 4 not an object
        b'{"id": "bad", "correct": true}',                             # 5 missing confidence
        b'{"id": "bad", "confidence": "sure", "correct": true}',       # 6 non-numeric
        b'{"id": "bad", "confidence": NaN, "correct": true}',          # 7 NaN
        b'{"id": "bad", "confidence": 85, "correct": "perhaps"}',      # 8 unknown outcome token
        ok("p9", 60, "false"),                                         # 9
        b'{"id": "caf\xe9", "confidence": 85, "correct": true}',       # 10 not UTF-8
        b'{"id": "p11", "confidence": "85%", "correct": "yes"}',       # 11 (percent string, kept)
        b'{"id": "bad", "confidence": 101, "correct": true}',          # 12 outside the scale
    ] + [ok(f"q{i}", 50 + i % 50, "true" if i % 4 else "false") for i in range(13, 213)]
      + [b'{"id": "bad", "confidence": 9']),                          # 213 truncated
}


def main() -> None:
    for name, data in CASES.items():
        (HERE / name).write_bytes(data)


if __name__ == "__main__":
    main()
