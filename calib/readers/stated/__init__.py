"""Reader for JSONL of stated confidences: one judged item per line.

The package: :mod:`.rules` (names, reasons, value rules), :mod:`.fields` (finding the
fields), :mod:`.slow` (the per-line path), :mod:`.columnar` (the pyarrow path),
:mod:`.chunks` (chunking and routing lines between the two), :mod:`.finish` (scale,
report); :func:`read` here drives them.

A line looks like ``{"id": "q17", "confidence": 95, "correct": true}``; ``.jsonl.gz``
arrives here already decompressed (:func:`calib.readers.source.read_source`).

Fields
------
Each field is found by name in the first :data:`SAMPLE_OBJECTS` objects of the
file, unless :class:`~calib.readers.base.LoadOptions` names it. Names are matched
ignoring case, ``_``, ``-`` and spaces (``isCorrect`` matches ``is_correct``), at
the top level first and then inside nested objects (``metadata.confidence``); the
first name of each list, in list order, that is present (not null) in at least
half of the sampled objects and whose values are of the right kind in at least
half of them wins:

- confidence (:data:`CONFIDENCE_KEYS`): a number, a numeric string (``"85"``) or a
  percent string (``"85%"``);
- outcome (:data:`OUTCOME_KEYS`): ``true``/``false``, ``1``/``0``, or one of the
  tokens in :data:`TRUE_TOKENS` / :data:`FALSE_TOKENS` (``"yes"``, ``"C"``/``"I"``
  as Inspect writes them...), case and surrounding spaces ignored;
- when no outcome field is found, the outcome is derived: a prediction
  (:data:`PREDICTION_KEYS`) equal to a gold answer (:data:`GOLD_KEYS`) is right.
  Both are compared as text with surrounding whitespace trimmed and case ignored
  (``str.casefold``); numbers are written without a trailing ``.0`` (``3.0`` equals
  ``3``); a gold *list* accepts any of its elements. ``options.extra["pred_key"]``
  and ``options.extra["gold_key"]`` name them explicitly;
- item id (:data:`ID_KEYS`, a string or integer; ``""`` when absent), question
  text for the review queue (:data:`TEXT_KEYS`, strings only, cut to
  :data:`TEXT_CHARS` characters), and the group only when
  ``options.group_key`` names it (lines without it go to group ``"(missing)"``);
- the cluster only when ``options.cluster_key`` names a field other than the id, read
  in this one pass as Python's ``str`` of the value (``None`` where absent, null, an
  object or a list: :func:`calib.readers.jsonl.cluster_label`; the pyarrow path takes a
  cluster field of text only).

A key given in the options that contains a dot is read as a literal key when the
sampled objects have it, else as a path (``meta.conf`` is ``obj["meta"]["conf"]``).
The report's ``fields`` says which keys were used and its ``notes`` say how.

Scale
-----
:func:`calib.scale.read_scale` over the confidences of the lines that passed every
other check: a percent string (``"85%"``) is on 0-100 whatever the other lines say;
bare numbers (JSON numbers and numeric strings) are on ``options.rescale`` or on the
scale the bulk of them fits (:func:`calib.scale.detect_scale`: at most 5% of them
outside, reported as ``outside the scale``; a value within 1e-9 of the span beyond an
end is on it). Bare numbers in two ranges, between 0 and 1 next to numbers above 1
(0.85 and 85), are refused with both counts unless ``options.mixed_scales`` reads each
by its range; a few (at most the 5% allowance) are ``ambiguous scale`` bad lines.
``Judgments.stated`` keeps the number as written (``"85%"`` is 85) when every value has
one form; with several forms it is on the commonest form's scale (the others converted
through their probability, counted in ``report.forms`` and a note). ``Judgments.prob``
is ``scale.to_prob(stated)``. A ``--rescale`` that contradicts the values is applied and
warned about (``report.warnings``, :func:`calib.scale.rescale_warnings`).

Bad lines
---------
Every line that cannot be used is reported (:class:`~calib.loadreport.LineIssue`:
line, field, reason, detail) and every other line is kept. One reason per line,
checked in this order: ``line too long`` (bytes, ``options.max_line_chars``),
``not UTF-8``, ``invalid JSON`` (``truncated line`` for a last line without its
newline that ends inside its JSON), ``not a JSON object``, ``duplicate key`` (the
confidence, outcome, prediction or gold named twice in one object: Python's ``json``
would keep the last silently, pyarrow refuses the line), ``missing confidence``
(absent or null), ``non-numeric confidence``, ``NaN/Infinity`` (Python's ``json``
reads ``NaN``/``Infinity`` literals and ``1e400``; they are refused here), then
``missing outcome`` / ``unknown outcome token``, and last ``outside the scale`` or
``ambiguous scale``.
A ``NaN`` in a field that is not used does not drop the line. Blank lines are
counted (``report.blank``); a UTF-8 byte-order mark (at the start of the file or
of a line, as when files were concatenated) and CRLF line ends are accepted.
A line nested deeper than Python's recursion limit is ``invalid JSON`` ("nested too
deeply", :func:`calib.readers.jsonl.json_loads`); an integer literal longer than Python's
4,300-digit limit is read as a float (JSON has no limit). The field sampler skips a
line over ``options.max_line_chars`` unparsed, as the per-line path reports it.

Speed
-----
The per-line path (Python's ``json`` and the rules above) costs about 7 µs a line on
a small machine: 7 s for a million lines. So lines are read in ~1 MB chunks (two
threads) by pyarrow's C++ JSON reader (:func:`pyarrow.json.read_json`, with an
explicit schema of the used fields only), and only the lines it cannot take go the
per-line way. pyarrow and Python's ``json`` do not accept the same texts, so a
chunk goes to pyarrow only when every line surely reads the same in both
(:func:`~calib.readers.stated.chunks._chunk_is_clean`, a few numpy passes): each line starts with ``{`` and ends
with ``}``, is valid UTF-8, holds none of the tokens pyarrow accepts and Python does
not (``Inf``, ``-NaN``) and at most :data:`MAX_OPENERS` brackets (pyarrow's parser
recurses without limit: a line nested 30,000 deep crashes the process), and pyarrow
must return exactly one row per line. A chunk that fails this is sorted line by line
with numpy (:func:`~calib.readers.stated.chunks._classify`, which also sends lines whose used field has another
JSON type than the schema's to the per-line path); pyarrow refusing a piece anyway
splits it at the row it names. Values read by pyarrow are judged by the same rule
functions as the per-line path (applied once per distinct value), and the few whose
Python reading could differ (non-finite, or beyond 2**53) are re-read line by line,
so both paths give identical rows and reports. ``read(..., fast=False)`` forces the
per-line path and ``fast=True`` the fast one; by default a file under
:data:`PER_LINE_BELOW` bytes is read line by line, since importing pyarrow costs more
than reading it in Python (``bench/bench_speed.py``); the tests compare the two on the
bad-input corpus, random files and hypothesis-generated lines. ``bench/bench_loading.py`` prints the figures.
"""

from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from calib.errors import CalibError
from calib.readers.base import LoadOptions, Read, Source
from calib.readers.jsonl import BOM, cluster_key
from calib.readers.stated.chunks import CHUNK_BYTES, _chunk, _chunks, _split
from calib.readers.stated.fields import SAMPLE_LINES, SAMPLE_OBJECTS, _Key, _resolve, _sample
from calib.readers.stated.finish import _finish
from calib.readers.stated.rules import (
    CONFIDENCE_KEYS,
    FALSE_TOKENS,
    GOLD_KEYS,
    ID_KEYS,
    MISSING_GROUP,
    OUTCOME_KEYS,
    PREDICTION_KEYS,
    TEXT_CHARS,
    TEXT_KEYS,
    TRUE_TOKENS,
)
from calib.readers.stated.slow import _Ctx, _slow

#: Files smaller than this (bytes, decompressed) are read line by line unless ``fast=True``:
#: ~30 ms in Python against ~60-80 ms to import pyarrow (``bench/bench_speed.py``).
PER_LINE_BELOW = 1 << 18

__all__ = [
    "CONFIDENCE_KEYS", "FALSE_TOKENS", "GOLD_KEYS", "ID_KEYS", "MISSING_GROUP", "OUTCOME_KEYS",
    "PREDICTION_KEYS", "SAMPLE_LINES", "SAMPLE_OBJECTS", "TEXT_CHARS", "TEXT_KEYS", "TRUE_TOKENS", "read",
]


def read(source: Source, options: LoadOptions, *, fast: bool | None = None) -> Read:
    """Read a JSONL file of stated confidences (see the module docstring).

    Parameters
    ----------
    source:
        The file's name and (decompressed) bytes.
    options:
        Field names, scale, strictness and limits.
    fast:
        Use the pyarrow fast path where it provably gives the same result. ``False``
        reads every line in Python (the reference the tests compare against);
        ``None`` (the default) uses the fast path from :data:`PER_LINE_BELOW` bytes on.

    Returns
    -------
    rows, report:
        Every usable line, and what happened to every other line.

    Raises
    ------
    CalibError
        Empty file, no usable line, no confidence or outcome field, too many lines,
        an undetectable scale, or (``options.strict``) the first bad line.
    """
    name = source.name
    data = source.data.removeprefix(BOM)
    size = max(1, min(CHUNK_BYTES, options.max_line_chars))
    spans = _chunks(data, size)
    n_lines = sum(span[3] for span in spans)
    if n_lines > options.max_rows:
        raise CalibError(
            f"{name}: more than {options.max_rows:,} lines ({n_lines:,}); refused "
            "(raise CALIB_MAX_ROWS if this file is genuine, or aggregate it to a count table value,n,correct)"
        )
    sample = _sample(data, name, options.max_line_chars)
    fields, notes = _resolve(sample, options, name)
    if (ckey := cluster_key(options, fields.item_id.name if fields.item_id else None)) is not None:
        # --cluster-key is read in this one pass, beside the other fields
        fields = dataclasses.replace(fields, cluster=_Key(ckey, sample.path_of(ckey), "given"))
    parse_options = None
    if fields.phrases is None and ((len(data) >= PER_LINE_BELOW) if fast is None else fast):
        from calib.readers.stated.columnar import _schema  # imports pyarrow

        parse_options = _schema(fields, sample)
    ctx = _Ctx(
        name=name, options=options, fields=fields, last_line=n_lines,
        unterminated=bool(data) and not data.endswith(b"\n"), parse_options=parse_options,
    )
    if ctx.parse_options is None:
        parts = [_slow(_split(data, n_lines), np.arange(1, n_lines + 1, dtype=np.int64), ctx)]
    else:
        workers = min(2, os.cpu_count() or 1, len(spans))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(lambda span: _chunk(data, span, ctx), spans))
        else:
            results = [_chunk(data, span, ctx) for span in spans]
        parts = [p for r in results for p in r]
    return _finish(parts, ctx, notes, n_lines, data)
