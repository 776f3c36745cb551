"""Count-table files: what a warehouse ``GROUP BY`` writes (CSV, Parquet, JSON/JSONL with
columns ``value, n, correct`` and optionally ``group``), read into a
:class:`calib.table.CountTable` under limits that trust no footer.

Contract: :func:`read_counts` takes a path (and optionally its bytes) and returns a
:class:`~calib.table.CountTable`, or raises :class:`~calib.errors.CalibError` naming the
file, the row and the limit or the reason; every limit applies before the cost it guards.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from calib.errors import CalibError
from calib.readers.base import MAX_DECOMPRESSED_BYTES
from calib.readers.source import GZIP_MAGIC, gunzip_capped
from calib.scale import Scale
from calib.table import CountTable, from_counts

if TYPE_CHECKING:  # pandas and pyarrow are imported where used: they cost 0.3 s at start-up
    import pandas as pd
    import pyarrow as pa


#: Default caps of :func:`read_counts` (:class:`calib.readers.base.LoadOptions` passes its own).
COUNT_ROWS = 1_000_000
COUNT_LINE = 1_000_000
COUNT_PARSE = 512 * 2**20


def read_counts(
    path: str | Path, *, scale: Scale | None = None, data: bytes | None = None,
    max_rows: int = COUNT_ROWS, max_line: int = COUNT_LINE, max_parse: int = COUNT_PARSE,
    max_decompressed: int = MAX_DECOMPRESSED_BYTES,
) -> CountTable:
    """Read a count table file (CSV, Parquet or JSON/JSONL) with columns
    ``value, n, correct`` and optionally ``group``.

    This is what a warehouse GROUP BY produces (see the README). Limits apply before
    the cost they guard: a Parquet file is refused when its metadata declares more than
    ``max_rows`` rows, and is then decoded batch by batch with its rows counted again
    and its decoded bytes (text held once per distinct value) kept under an eighth of
    ``max_parse``, trusting no footer (:func:`_read_parquet`); a CSV or JSONL line longer than ``max_line`` bytes is refused before
    parsing, and at most ``max_rows + 1`` rows are parsed; a JSON array's parse cost
    (:func:`calib.readers.jsonl.parse_cost`) must be under ``max_parse``. A Parquet file is
    recognised by its magic bytes whatever its name. A ``.csv.gz`` is inflated under
    ``max_decompressed`` bytes and ``max_rows + 1`` lines (:func:`~calib.readers.source.gunzip_capped`). A cell that is not a number, or a
    count beyond 2**53 (where a float stops holding every integer), is refused by row."""
    import io

    import pandas as pd

    name = str(path)
    low = name.lower()
    known = (".parquet", ".csv", ".csv.gz", ".jsonl", ".ndjson", ".json")
    if not low.endswith(known) and (data is None or data[:4] != b"PAR1"):
        raise CalibError(f"{name}: a count table must be .csv, .parquet, .json or .jsonl")
    if data is None:
        try:
            data = Path(name).read_bytes()
        except OSError as exc:
            raise CalibError(f"{name}: cannot read ({exc.strerror or exc})") from None
    too_many = (f"{name}: more than {max_rows:,} rows; refused (a count table holds one row per group and "
                "stated value: aggregate it further, or raise LoadOptions.max_cells; on the dashboard CALIB_MAX_CELLS)")
    try:
        if data[:4] == b"PAR1" or low.endswith(".parquet"):
            # an eighth of the parse budget: text decoded by Arrow is held about six times over
            # while it is read (its pages, Arrow's dictionary builder, this batch's and the last
            # batch's dictionary, Python's strings): 64 MB of text peaked at 0.5 GB
            df = _read_parquet(data, name, max_rows, too_many, max_parse // 8)
        elif low.endswith((".csv", ".csv.gz", ".jsonl", ".ndjson")):
            if data[:2] == GZIP_MAGIC:  # a bomb is refused while inflating, before it is held
                data = gunzip_capped(data, name, max_decompressed, max_lines=max_rows + 1)
            _check_lines(data, name, max_line)
            if low.endswith((".jsonl", ".ndjson")):
                df = pd.read_json(io.BytesIO(data), lines=True, nrows=max_rows + 1)
            else:
                df = pd.read_csv(io.BytesIO(data), nrows=max_rows + 1)
        elif low.endswith(".json"):
            from calib.readers.jsonl import parse_cost

            cost = parse_cost(data)
            if cost > max_parse:
                raise CalibError(f"{name}: would take about {cost / 2**20:,.0f} MB of memory to parse, over the "
                                 f"{max_parse / 2**20:,.0f} MB allowed; write it as CSV or Parquet")
            df = pd.read_json(io.BytesIO(data))
    except CalibError:
        raise
    except RecursionError:
        raise CalibError(f"{name}: cannot read as a count table: nested too deeply") from None
    except Exception as exc:  # pandas/pyarrow raise many types for unreadable files
        raise CalibError(f"{name}: cannot read as a count table: {exc}") from None
    if len(df) > max_rows:
        raise CalibError(too_many)
    cols = {str(c).lower(): c for c in df.columns}
    missing = [c for c in ("value", "n", "correct") if c not in cols]
    if missing:
        raise CalibError(
            f"{name}: a count table needs columns value, n, correct (+ optional group); "
            f"missing {', '.join(missing)}; found {', '.join(map(str, df.columns))}"
        )
    group = _text(df[cols["group"]]) if "group" in cols else None
    value, n, correct = (_numbers(df[cols[c]], c, name) for c in ("value", "n", "correct"))
    try:
        return from_counts(value, n, correct, scale=scale, group=group)
    except CalibError as exc:
        raise CalibError(f"{name}: {exc}") from None


#: Rows decoded at a time from a Parquet file (:func:`_read_parquet`).
PARQUET_BATCH = 4_096


class _TextColumn:
    """A Parquet text column read as a dictionary, batch by batch: the distinct names
    (each held once, in Python) and each row's code. Arrow grows a row group's dictionary
    from batch to batch; only the entries past the previous batch's (when it is a prefix of
    this one) are new."""

    def __init__(self) -> None:
        self.names: dict[object, int] = {}
        self.codes: list[np.ndarray] = []
        self.last: pa.Array | None = None
        self.local = np.empty(0, dtype=np.int64)  # the current dictionary's entries -> names

    def add(self, col: pa.DictionaryArray) -> int:
        """Take one batch's column; returns the bytes of the names it added."""
        d, start = col.dictionary, 0
        if self.last is not None and len(d) >= len(self.last) and d.slice(0, len(self.last)).equals(self.last):
            start = len(self.last)
        else:
            self.local = np.empty(0, dtype=np.int64)
        fresh = d.slice(start)
        added = np.fromiter((self.names.setdefault(x, len(self.names)) for x in fresh.to_pylist()),
                            dtype=np.int64, count=len(fresh))
        self.local, self.last = np.concatenate([self.local, added]), d
        idx = col.indices.to_numpy(zero_copy_only=False)
        null = col.indices.is_null().to_numpy(zero_copy_only=False)
        self.codes.append(np.where(null, -1, self.local[np.where(null, 0, idx).astype(np.int64)]))
        return int(fresh.nbytes) + idx.nbytes

    def series(self) -> pd.Series:
        import pandas as pd

        names = np.empty(len(self.names), dtype=object)
        names[:] = list(self.names)
        codes = np.concatenate(self.codes) if self.codes else np.empty(0, dtype=np.int64)
        return pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object)))


def _read_parquet(data: bytes, name: str, max_rows: int, too_many: str, max_bytes: int) -> pd.DataFrame:
    """The count columns of a Parquet file, decoded under a row cap and a byte budget.

    Nothing in the footer is trusted: its row count refuses early when it is over the cap,
    but the rows are counted again as they are decoded, batch by batch, and the decoded
    bytes (the numbers, each row's dictionary code, each distinct text once) are summed
    against ``max_bytes``; reading stops at the first batch over either limit and what was
    read is freed. Text columns are read as dictionaries and never expanded per row: one
    4,000-character group name on a million rows costs 4 kB, not 4 GB."""
    import io

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(io.BytesIO(data))
    declared = pf.metadata.num_rows
    if declared > max_rows:
        raise CalibError(f"{too_many} (the file's metadata says {declared:,})")
    schema = pf.schema_arrow
    want = [c for c in schema.names if str(c).lower() in ("value", "n", "correct", "group")]
    is_text = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)
    text = [c for c in want if any(t(schema.field(c).type) for t in is_text)]
    pf = pq.ParquetFile(io.BytesIO(data), read_dictionary=text)
    plain: dict[str, list[pa.Array]] = {c: [] for c in want}
    texts: dict[str, _TextColumn] = {}
    rows = used = 0
    try:
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=want, use_threads=False):
            rows += batch.num_rows
            if rows > max_rows:
                raise CalibError(f"{too_many} (found while reading; the file's metadata says {declared:,})")
            for c, col in zip(batch.schema.names, batch.columns, strict=True):
                if pa.types.is_dictionary(col.type):
                    used += texts.setdefault(c, _TextColumn()).add(col)
                else:
                    plain[c].append(col)
                    used += col.nbytes
                if used > max_bytes:
                    raise CalibError(f"{name}: decodes to more than {max_bytes / 2**20:,.0f} MB (at row {rows:,}, "
                                     f"column {c!r}); refused (a count table holds one short row per group and "
                                     "stated value)")
        return pd.DataFrame({c: texts[c].series() if c in texts else
                             pa.chunked_array(plain[c], type=schema.field(c).type).to_pandas() for c in want})
    finally:
        plain.clear()
        texts.clear()
        pa.default_memory_pool().release_unused()  # a refused file's batches go back to the system


def _text(col: pd.Series) -> np.ndarray:
    """A column as text, one object per row; a categorical column (a Parquet dictionary)
    converts its few categories and shares them between rows."""
    import pandas as pd

    if isinstance(col.dtype, pd.CategoricalDtype):
        names = pd.Series([*col.cat.categories, None], dtype=object).astype(str).to_numpy(dtype=object)
        return names[col.cat.codes.to_numpy()]  # code -1 (a null) is the last name, as astype(str) reads it
    return col.astype(str).to_numpy()


def _check_lines(data: bytes, name: str, max_line: int) -> None:
    """Refuse a line over ``max_line`` bytes, naming it, before a parser holds it."""
    if len(data) <= max_line:
        return
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    edges = np.concatenate(([-1], ends, [len(data)]))
    lengths = np.diff(edges) - 1
    if lengths.max() > max_line:
        i = int(np.argmax(lengths > max_line))
        raise CalibError(f"{name}: line {i + 1} is {int(lengths[i]):,} bytes, over the {max_line:,} limit "
                         "(line too long); refused")


def _numbers(col: pd.Series, what: str, name: str) -> np.ndarray:
    """A column as float64, refusing by row a cell that is not a number or, for the
    counts, an integer a float cannot hold exactly (beyond 2**53)."""
    import pandas as pd

    x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(x) & col.notna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CalibError(f"{name}: row {i + 1}: {what} must be a number, got {preview_cell(col.iloc[i])}")
    if what != "value":
        big = np.abs(x) > 2.0**53
        if big.any():
            i = int(np.flatnonzero(big)[0])
            raise CalibError(f"{name}: row {i + 1}: {what} {preview_cell(col.iloc[i])} is too large a count "
                             "(at most 2**53)")
    return x


def preview_cell(v: object) -> str:
    t = str(v)
    return repr(t if len(t) <= 40 else t[:39] + "…")
