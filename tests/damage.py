"""Seeded damage for the readers' robustness tests: every reader must answer a
damaged file with a CalibError naming the problem, never another exception."""

from __future__ import annotations

import random
from collections.abc import Iterator

#: Text inserted at a random place: JSON of the wrong type, numbers Python's json
#: accepts and JSON does not, a byte that is not UTF-8.
JUNK = (b"null", b'"x"', b"[]", b"{}", b"-1e999", b"NaN", b"\xff")


def mutations(data: bytes, seed: int, count: int, junk: tuple[bytes, ...] = JUNK) -> Iterator[bytes]:
    """``count`` damaged copies of ``data``: cut short, bytes overwritten, a span
    deleted, or junk inserted."""
    rng = random.Random(seed)
    for _ in range(count):
        d = bytearray(data)
        kind = rng.randrange(4)
        i = rng.randrange(len(d))
        if kind == 0:
            d = d[:i]
        elif kind == 1:
            for _ in range(rng.randint(1, 30)):
                d[rng.randrange(len(d))] = rng.randrange(256)
        elif kind == 2:
            del d[i:i + rng.randrange(200)]
        else:
            d[i:i] = rng.choice(junk)
        yield bytes(d)
