"""One extra field of every row of a JSON Lines file, for ``calib audit --covariate FIELD``
(:mod:`calib.covariate`): read by the rows' line numbers after the file was loaded, so no
reader changes its rows.

A value is a number, a text, ``true``/``false``, or ``None`` when the line has no such
field (or ``null``); a dotted name (``meta.lang``) reaches into nested objects. Only a JSON
Lines file whose lines are the rows (stated confidences, option log-probs, lm-eval samples)
has one; any other input is refused with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.readers.base import LoadOptions
from calib.readers.jsonl import get_or, json_loads
from calib.rows import Judgments

#: The formats whose rows are JSON Lines, one row a line.
COVARIATE_FORMATS = ("stated", "logprobs", "lmeval")
#: Rows read to list the fields a covariate can be read from, and the most fields listed.
FIELD_SAMPLE = 200
MAX_FIELDS = 200


def _get(obj: Any, key: str) -> Any:
    """The field ``key`` (:func:`calib.readers.jsonl.get_path`) as a scalar: an object or a
    list as its text cut to 80 characters; ``None`` when absent or null."""
    v = get_or(obj, key)
    return v if isinstance(v, (str, int, float, bool)) else (None if v is None else str(v)[:80])


def read_covariate(path: str, fmt: str, rows: Judgments | None, key: str,
                   options: LoadOptions | None = None) -> np.ndarray:
    """The field ``key`` of each row (object array, ``None`` where missing), by line."""
    from calib.readers.source import read_source

    _check(path, fmt, rows, key, Path(path).is_dir())
    assert rows is not None
    return covariate_values(read_source(path, options=options).data, rows, key, path)


def _check(path: str, fmt: str, rows: Judgments | None, key: str, is_dir: bool = False) -> None:
    """Refuse what has no field per row: an empty name, a count table, another format."""
    if not key.strip():
        raise CalibError("--covariate: the field name must not be empty")
    if rows is None:
        raise CalibError(f"--covariate {key}: {path} is a count table; the covariate needs one row per answer")
    if fmt not in COVARIATE_FORMATS or is_dir:
        raise CalibError(f"--covariate {key}: reads a field of JSON Lines rows; {path} is read as {fmt}")


def _line_starts(data: bytes) -> np.ndarray:
    return np.concatenate([[0], np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1])


def _line_object(data: bytes, starts: np.ndarray, line: int, key: str, path: str) -> Any:
    """The JSON object on line ``line`` (1-based) of ``data``."""
    j = int(line) - 1
    if not 0 <= j < starts.size:
        raise CalibError(f"--covariate {key}: line {int(line)} of {path} is not in the file")
    end = starts[j + 1] - 1 if j + 1 < starts.size else len(data)
    try:
        return json_loads(data[starts[j]:end].rstrip(b"\r").decode("utf-8"))
    except ValueError:
        raise CalibError(f"--covariate {key}: line {int(line)} of {path} is not a JSON object") from None


def covariate_values(data: bytes, rows: Judgments, key: str, path: str) -> np.ndarray:
    """The field ``key`` of each row of ``rows`` read from the file's decoded bytes
    ``data`` by the rows' line numbers (object array, ``None`` where missing); ``path``
    names the file in messages."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    starts = _line_starts(data)
    out = np.empty(len(rows), dtype=object)
    found = 0
    for i, line in enumerate(np.asarray(rows.line, dtype=np.int64)):
        out[i] = _get(_line_object(data, starts, int(line), key, path), key)
        found += out[i] is not None
    if len(rows) and found == 0:
        raise CalibError(f"--covariate {key}: no row of {path} has the field {key!r}")
    return out


def field_names(data: bytes, rows: Judgments, exclude: tuple[str, ...] = (), *, sample: int = FIELD_SAMPLE) -> list[str]:
    """The fields a covariate can be read from: the keys (dotted one level into nested
    objects) holding a number, text or true/false on the first ``sample`` rows, in the
    order first seen, without ``exclude`` (the confidence and outcome fields)."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    starts = _line_starts(data)
    seen: dict[str, None] = {}
    for line in np.asarray(rows.line, dtype=np.int64)[:sample]:
        try:
            obj = _line_object(data, starts, int(line), "", "the file")
        except CalibError:
            continue
        for k, v in (obj.items() if isinstance(obj, dict) else ()):
            inner = v.items() if isinstance(v, dict) else [("", v)]
            for k2, v2 in inner:
                name = f"{k}.{k2}" if k2 else str(k)
                if isinstance(v2, (str, int, float, bool)) and name not in exclude and len(seen) < MAX_FIELDS:
                    seen.setdefault(name)
    return list(seen)
