"""What the review card shows of an item (issue 25): its question, the answer under review,
the reference answer and the judge's rationale, where the file has them.

Contract
--------
- **Detected like the other fields.** Each of the four is the first key of its list
  (:data:`CARD_KEYS`) that a line holds with a non-empty value; an owner's override names
  the key instead (a dotted path, ``"meta.reference"``, as the reader's overrides do).
  The file's confidence and outcome keys are never shown (``exclude``): the card is blind.
- **JSON lines only.** The fields are read from a JSONL file's lines (plain or gzip, under
  the reader's limits, :func:`calib.readers.source.read_source`); a file of another format
  gives none, and the card shows the reader's short text as before.
- **Text, bounded.** A value is text (a number or ``true``/``false`` as written, a list or
  object as compact JSON), cut at :data:`MAX_FIELD_CHARS`; it is user text, never HTML.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from calib.readers.jsonl import get_or

#: The card's fields and the keys each is detected by, in order.
CARD_KEYS: dict[str, tuple[str, ...]] = {
    "question": ("question", "prompt", "input", "query", "instruction", "problem"),
    "answer": ("answer", "response", "output", "prediction", "completion", "model_answer", "generation"),
    "reference": ("reference", "reference_answer", "gold_answer", "ground_truth", "expected", "ideal", "target"),
    "rationale": ("rationale", "judge_rationale", "reasoning", "judge_reasoning", "explanation", "critique",
                  "feedback"),
}
#: Longest text of one field on the card, characters.
MAX_FIELD_CHARS = 5_000


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (int, float)):
        text = repr(value)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text[:MAX_FIELD_CHARS]


def fields_of(obj: Mapping[str, Any], overrides: Mapping[str, str] | None = None,
              exclude: Collection[str] = ()) -> dict[str, str]:
    """The card's fields of one parsed line: field -> text, for those it has."""
    out = {}
    for name, keys in CARD_KEYS.items():
        chosen = (overrides or {}).get(name)
        for key in ((chosen,) if chosen else keys):
            if key in exclude:
                continue
            text = _text(get_or(obj, key))
            if text.strip():
                out[name] = text
                break
    return out


def card_fields(data: bytes, filename: str, lines: Collection[int], overrides: Mapping[str, str] | None = None,
                exclude: Collection[str] = ()) -> dict[int, dict[str, str]]:
    """The card's fields of the given 1-based ``lines`` of a JSONL file (see the module);
    ``{}`` for a file that is not JSON lines or cannot be read."""
    from calib.errors import CalibError
    from calib.readers.source import read_source, strip_gz

    if not strip_gz(filename).lower().endswith((".jsonl", ".ndjson", ".json")):
        return {}
    try:
        text = read_source(filename, data).data
    except CalibError:
        return {}
    want = set(lines)
    out: dict[int, dict[str, str]] = {}
    for no, raw in enumerate(text.split(b"\n"), 1):
        if no not in want:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            got = fields_of(obj, overrides, exclude)
            if got:
                out[no] = got
    return out
