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
from calib.readers.jsonl import json_loads
from calib.rows import Judgments


def _get(obj: Any, path: list[str]) -> Any:
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj if isinstance(obj, (str, int, float, bool)) else (None if obj is None else str(obj)[:80])


def read_covariate(path: str, fmt: str, rows: Judgments | None, key: str,
                   options: LoadOptions | None = None) -> np.ndarray:
    """The field ``key`` of each row (object array, ``None`` where missing), by line."""
    from calib.readers.source import read_source

    if not key.strip():
        raise CalibError("--covariate: the field name must not be empty")
    if rows is None:
        raise CalibError(f"--covariate {key}: {path} is a count table; the covariate needs one row per answer")
    if fmt not in ("stated", "logprobs", "lmeval") or Path(path).is_dir():
        raise CalibError(f"--covariate {key}: reads a field of JSON Lines rows; {path} is read as {fmt}")
    data = read_source(path, options=options).data.removeprefix(b"\xef\xbb\xbf")
    starts = np.concatenate([[0], np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1])
    parts = key.split(".")
    out = np.empty(len(rows), dtype=object)
    found = 0
    for i, line in enumerate(np.asarray(rows.line, dtype=np.int64)):
        j = int(line) - 1
        if not 0 <= j < starts.size:
            raise CalibError(f"--covariate {key}: line {int(line)} of {path} is not in the file")
        end = starts[j + 1] - 1 if j + 1 < starts.size else len(data)
        try:
            obj = json_loads(data[starts[j]:end].rstrip(b"\r").decode("utf-8"))
        except ValueError:
            raise CalibError(f"--covariate {key}: line {int(line)} of {path} is not a JSON object") from None
        out[i] = _get(obj, parts)
        found += out[i] is not None
    if len(rows) and found == 0:
        raise CalibError(f"--covariate {key}: no row of {path} has the field {key!r}")
    return out
