"""The chunk-wide test of which lines go to pyarrow (``_chunk_is_clean``) against its
definition, checked line by line in plain Python on random chunks built from the cases
it must catch (issue 29 made it cheaper; the answer must not move)."""

from __future__ import annotations

import random

import pytest

from calib.readers.stated.chunks import MAX_OPENERS, _chunk_is_clean, _chunks


def clean_by_definition(body: bytes, n: int) -> bool:
    """Every line ``{...}`` (the last may keep a ``\\r``), all line ends LF or all CRLF,
    at most ``MAX_OPENERS - 1`` ``{``/``[`` beyond one per line, no ``Inf`` nor
    ``-NaN``, valid UTF-8."""
    lines = body.split(b"\n")
    assert len(lines) == n
    if len(body) < 2 or not body.startswith(b"{") or not (body.endswith(b"}") or body.endswith(b"}\r")):
        return False
    if any(not line.startswith(b"{") for line in lines[1:]):
        return False
    inner = lines[:-1]
    if not (all(line.endswith(b"}") for line in inner) or all(line.endswith(b"}\r") for line in inner)):
        return False
    if body.count(b"{") + body.count(b"[") - n > MAX_OPENERS - 1:
        return False
    if b"Inf" in body or b"-NaN" in body:
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


PIECES = [b'"p": 0.7', b'"p": -0.5', b'"c": true', b'"t": "I said No"', b'"x": Inf', b'"x": -NaN',
          b'"x": NaN', b'"x": -Infinity', b'"t": "In"', b'"t": "-N"', b'"t": "\xc3\xa9"', b'"t": "\xff"',
          b'"a": [1, [2]]', b'"o": {"k": 1}', b'"t": "a-NaN"', b'"t": "Inf"']


def random_chunk(rng: random.Random) -> tuple[bytes, int]:
    n = rng.randint(1, 6)
    end = rng.choice([b"\n", b"\r\n"])
    lines = []
    for _ in range(n):
        line = b"{" + b", ".join(rng.choice(PIECES[:3] if rng.random() < 0.6 else PIECES)
                                for _ in range(rng.randint(1, 3))) + b"}"
        r = rng.random()
        if r < 0.05:
            line = line[1:]  # no opening brace
        elif r < 0.10:
            line = line[:-1]  # no closing brace
        elif r < 0.13:
            line = b"[" * rng.choice([50, MAX_OPENERS - 1, MAX_OPENERS, 300]) + line
        elif r < 0.16:
            line += b" "
        lines.append(line)
    body = (end if rng.random() < 0.9 else rng.choice([b"\n", b"\r\n"])).join(lines)
    if rng.random() < 0.1:
        body += b"\r"
    return body, n


@pytest.mark.parametrize("seed", range(4))
def test_the_chunk_test_follows_its_definition(seed: int) -> None:
    rng = random.Random(seed)
    seen = set()
    for _ in range(3000):
        body, n = random_chunk(rng)
        want = clean_by_definition(body, n)
        seen.add(want)
        assert _chunk_is_clean(body, n) == want, (body, n)
    assert seen == {True, False}


@pytest.mark.parametrize(("body", "want"), [
    (b'{"a": 1}', True), (b'{"a": 1}\r', True), (b"{}", True), (b"{", False), (b"}", False),
    (b'{"a": 1}\n{"b": 2}', True), (b'{"a": 1}\r\n{"b": 2}', True), (b'{"a": 1}\n{"b": 2}\r', True),
    (b'{"a": 1}\r\n{"b": 2}\n{"c": 3}', False),  # mixed line ends
    (b'{"a": Inf}', False), (b'{"a": "In"}\n{"f": 1}', True), (b'{"a": -NaN}', False),
    (b'{"a": "-N"}\n{"aN": 1}', True), (b'{"a": "\xff"}', False), (b'{"a": "\xc3\xa9"}', True),
])
def test_the_chunk_test_on_its_edges(body: bytes, want: bool) -> None:
    n = body.count(b"\n") + 1
    assert clean_by_definition(body, n) == want
    assert _chunk_is_clean(body, n) == want


def test_chunks_cover_the_file_in_whole_lines_counted_right() -> None:
    """``_chunks`` (lines counted with numpy, a long line by ``bytes.count``) against the
    definition: consecutive spans covering the data, each ending after a newline (or at
    the end), holding as many lines as ``bytes.split`` finds, numbered on from 1."""
    rng = random.Random(3)
    pieces = [b'{"a": 1}', b"", b"\r", b"x" * 50, b'{"b": "\\n"}', b"\xff\xfe"]
    for _ in range(400):
        data = b"\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        data += rng.choice([b"", b"\n"])
        size = rng.choice([1, 2, 7, 16, 64, 1000])
        spans = _chunks(data, size)
        pos, line = 0, 1
        for start, end, first, n in spans:
            assert (start, first) == (pos, line) and end > start
            assert end == len(data) or data[end - 1:end] == b"\n"
            assert n == len(data[start:end].removesuffix(b"\n").split(b"\n"))
            pos, line = end, line + n
        assert pos == len(data)
