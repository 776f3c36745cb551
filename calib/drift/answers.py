"""Answer texts of a run's rows, for drift attribution (:mod:`calib.drift.attribution`).

Contract: :func:`answers_of` reads the field ``key`` of the JSON line each row came from
(``rows.line``, 1-based) of a JSON Lines file (``.jsonl``, ``.ndjson``, gzip-compressed or
not) and returns it per row as text (a number or object as its JSON text). A line without
the field, or a file that is not JSON Lines, is refused with a message naming the line or
the file: an answer is never guessed (a missing answer would be read as a changed one).
The file was read under the input limits by the loader already; only the rows' lines are
parsed here.
"""

from __future__ import annotations

import json

import numpy as np

from calib.errors import CalibError
from calib.readers.jsonl import get_path, is_missing, json_loads
from calib.readers.source import read_source, strip_gz
from calib.rows import Judgments

#: Files whose answers can be read (one JSON object per line).
SUFFIXES = (".jsonl", ".ndjson")


def answers_of(path: str, rows: Judgments, key: str) -> np.ndarray:
    """The answer text of each row (see the module docstring)."""
    if not strip_gz(str(path)).lower().endswith(SUFFIXES):
        raise CalibError(f"--answer-key: {path}: answers are read from JSON Lines files ({', '.join(SUFFIXES)}) "
                         "only")
    return answers_from(read_source(path).data, str(path), rows, key)


def answers_from(data: bytes, name: str, rows: Judgments, key: str, *, flag: str = "--answer-key",
                 instead: str = "leave --answer-key out") -> np.ndarray:
    """The answer text of each row from a JSON Lines file's decoded bytes ``data``
    (:func:`answers_of` reads them from a path; the dashboard from an upload). ``name``
    names the file, ``flag`` the setting and ``instead`` the way out in messages."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    out = []
    for no in np.asarray(rows.line, np.int64):
        if not 1 <= no <= len(lines):
            raise CalibError(f"{flag}: {name}: line {no} is not in the file")
        try:
            obj = json_loads(lines[no - 1])
        except ValueError:
            raise CalibError(f"{flag}: {name}: line {no} is not a JSON object") from None
        v = get_path(obj, key)
        if is_missing(v) or v is None:
            raise CalibError(f"{flag} {key}: {name}: line {no} has no field {key!r} (every judged line needs "
                             f"its answer, or {instead} to compare outcomes)")
        out.append(v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False))
    return np.asarray(out, dtype=object).astype(str)
