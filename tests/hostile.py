"""A hostile-input corpus: one generator per class of input that once crashed a reader
or took the server's memory (issue 9, item 7), and the outcome each must get.

Every :class:`Case` writes the bytes of one file with :meth:`Case.bytes`; ``size``
is the hostile part's size (a line's length, a nesting depth, a row count...). The
tests use :attr:`Case.small` (fast, still over every limit it probes); the memory
benchmark (``bench/bench_hostile_memory.py``) uses :attr:`Case.full`, the size that
once cost gigabytes, at most 5 MB on disk. Nothing here is committed as data: the
files are generated in a temporary folder.

Each case says what the command line must answer: the exit code (0: the valid rows
are kept and the bad ones reported; 2: the file is refused with a message), the
fragments the message must hold (the line or sample, and the reason), and how many
rows are kept.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

#: Valid rows every stated-confidence case carries besides its hostile part.
GOOD = 20


@dataclass(frozen=True)
class Case:
    """One hostile input and the answer it must get.

    Attributes
    ----------
    name:
        File name (its extension chooses the reader).
    make:
        ``make(size)`` returns the file's bytes.
    small, full:
        ``size`` for the tests and for the memory benchmark.
    exit:
        Expected exit code of ``calib audit``: 0 or 2.
    says:
        Fragments the output must contain (case-insensitive): the line or sample
        and the reason.
    kept:
        Rows kept (exit 0).
    args:
        Options of ``calib audit`` besides the file (``--group-key g``).
    """

    name: str
    make: Callable[[int], bytes]
    small: int
    full: int
    exit: int
    says: tuple[str, ...]
    kept: int | None = None
    args: tuple[str, ...] = ()

    def bytes(self, full: bool = False) -> bytes:
        return self.make(self.full if full else self.small)


# --------------------------------------------------------------- building blocks
def good_lines(n: int = GOOD, start: int = 0) -> bytes:
    """``n`` valid stated-confidence lines (ids ``q<start>``...)."""
    return b"".join(
        json.dumps({"id": f"q{i}", "confidence": 50 + 10 * (i % 5), "correct": i % 2 == 0}).encode() + b"\n"
        for i in range(start, start + n)
    )


def gz(data: bytes) -> bytes:
    return gzip.compress(data, 6, mtime=0)


def deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def inspect_sample(i: int, sid: str | None = None) -> dict:
    return {
        "id": sid if sid is not None else f"s{i}", "epoch": 1,
        "input": f"question {i}", "target": "A",
        "output": {"completion": "ANSWER: A"},
        "scores": {"match": {"value": "C" if i % 2 == 0 else "I", "answer": "A",
                             "metadata": {"confidence": 50 + 10 * (i % 5)}}},
    }


def inspect_header() -> dict:
    return {"version": 2, "status": "success",
            "eval": {"task": "hostile", "model": "m", "scorers": [{"name": "match"}]}}


def eval_zip(members: list[tuple[str, bytes]]) -> bytes:
    """A deflate ``.eval`` archive with these members (header first)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def good_eval(n: int = GOOD, extra: list[tuple[str, bytes]] | None = None, header: bytes | None = None) -> bytes:
    members = [("header.json", header if header is not None else json.dumps(inspect_header()).encode())]
    members += [(f"samples/s{i}_epoch_1.json", json.dumps(inspect_sample(i)).encode()) for i in range(n)]
    return eval_zip(members + (extra or []))


def logprob_lines(n: int = GOOD) -> bytes:
    return b"".join(
        json.dumps({"id": f"q{i}", "logprobs": [-0.2 - 0.1 * (i % 3), -1.5, -2.5], "gold": i % 2}).encode() + b"\n"
        for i in range(n)
    )


def lmeval_sample(i: int) -> dict:
    args = {f"gen_args_{k}": {"arg_0": "Q?\nAnswer:", "arg_1": f" {c}"} for k, c in enumerate("AB")}
    return {"doc_id": i, "doc": {"question": "Q?", "choices": ["A", "B"], "answer": i % 2},
            "target": str(i % 2), "arguments": args,
            "filtered_resps": [[str(-0.5 - 0.1 * (i % 3)), "False"], ["-1.0", "False"]],
            "acc": float(i % 2 == 0), "acc_norm": float(i % 2 == 0)}


def parquet(rows: int) -> bytes:
    """A count table of ``rows`` identical rows, written a million at a time (a few
    kB per million on disk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    block = min(rows, 1_000_000)
    table = pa.table({"value": pa.array([90.0] * block), "n": pa.array([1] * block), "correct": pa.array([1] * block)})
    with pq.ParquetWriter(buf, table.schema, compression="zstd") as w:
        left = rows
        while left > 0:
            w.write_table(table.slice(0, min(block, left)))
            left -= block
    return buf.getvalue()


# --------------------------------------------------------------- generators
def long_first_line(size: int) -> bytes:
    """A gzip whose first line is ``size`` bytes: the field sampler used to parse it."""
    pad = b"a" * max(0, size - 60)
    return gz(b'{"confidence": 90, "correct": true, "pad": "' + pad + b'"}\n' + good_lines())


def deep_line(size: int) -> bytes:
    return good_lines() + b'{"confidence": 90, "correct": true, "x": ' + deep(size) + b"}\n"


def deep_first_line(size: int) -> bytes:
    return b'{"confidence": 90, "correct": true, "x": ' + deep(size) + b"}\n" + good_lines()


def deep_array_line(size: int) -> bytes:
    """Not an object at all: a bare array nested ``size`` deep."""
    return good_lines() + deep(size) + b"\n"


def huge_ints(size: int) -> bytes:
    """Integers too large for a float (400 digits) and beyond Python's int-string limit."""
    big = b"9" * size
    return good_lines() + b"".join([
        b'{"confidence": ' + b"9" * 400 + b', "correct": true}\n',
        b'{"confidence": ' + big + b', "correct": true}\n',
        b'{"confidence": -' + big + b', "correct": false}\n',
        b'{"confidence": 90, "correct": ' + big + b"}\n",
    ])


def int64_overflow(size: int) -> bytes:
    """Valid rows whose unused fields hold integers beyond int64 (kept), and a
    confidence beyond int64 (outside the scale)."""
    return good_lines() + b"".join([
        b'{"confidence": 70, "correct": true, "id": 99999999999999999999}\n',
        b'{"confidence": 70, "correct": false, "tokens": 18446744073709551616}\n',
        b'{"confidence": 18446744073709551616, "correct": true}\n',
    ])


def lone_surrogates(size: int) -> bytes:
    """Lone surrogates in an id, a question, a bad confidence and a bad line's preview."""
    return good_lines() + b"".join([
        b'{"id": "\\ud800", "question": "x \\udfff y", "confidence": 80, "correct": true}\n',
        b'{"id": "ok\\udc80", "confidence": 60, "correct": false}\n',
        b'{"id": "bad", "confidence": "\\ud83d", "correct": true}\n',
        b'{"confidence": 90, "correct": "\\udbff"}\n',
    ])


def array_one_line(size: int) -> bytes:
    """Stated rows written as one JSON array on one line (not JSON Lines)."""
    rows = [{"confidence": 50 + 10 * (i % 5), "correct": i % 2 == 0} for i in range(max(GOOD, size))]
    return json.dumps(rows).encode() + b"\n"


def array_counts(size: int) -> bytes:
    return json.dumps([{"value": v, "n": 10, "correct": v // 10 - 1} for v in range(50, 101, 10)]).encode()


def nonfinite_tokens(size: int) -> bytes:
    return good_lines() + b"".join(
        b'{"confidence": ' + t + b', "correct": true}\n' for t in (b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999")
    )


def boms(size: int) -> bytes:
    """A BOM before line 1 and before line 11 (accepted) and inside a line (not JSON)."""
    lines = good_lines().splitlines(keepends=True)
    lines[10] = b"\xef\xbb\xbf" + lines[10]
    return b"\xef\xbb\xbf" + b"".join(lines) + b'{"confidence": 90,\xef\xbb\xbf "correct": true}\n'


def nul_bytes(size: int) -> bytes:
    return good_lines() + b'{"id": "a\x00b", "confidence": 90, "correct": true}\n' + b"\x00" * size + b"\n"


def duplicate_keys(size: int) -> bytes:
    """A line naming its confidence twice: the value used is ambiguous."""
    return good_lines() + b'{"confidence": 90, "confidence": 20, "correct": true}\n'


def binary_noise(size: int) -> bytes:
    import random

    rng = random.Random(9)
    return bytes(rng.randrange(256) for _ in range(size))


def only_cr(size: int) -> bytes:
    """Lines ended by a bare carriage return (old Mac): one long line to a JSONL reader."""
    return good_lines().replace(b"\n", b"\r")


def gzip_bomb(size: int, fill: bytes = b" ") -> bytes:
    """``size`` MiB of spaces gzipped (about 1,000:1): refused past the decompression cap.

    One MiB is deflated once and its bytes repeated: a full flush ends them on a byte
    boundary with the dictionary reset, so copies decode alike (no 1 GB to compress)."""
    import struct
    import zlib

    block = fill * (1 << 20)
    z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size):
        crc = zlib.crc32(block, crc)
    last = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()  # an empty final block
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return head + piece * size + last + struct.pack("<II", crc, (size << 20) & 0xFFFFFFFF)


def gzip_bomb_lines(size: int) -> bytes:
    """``size`` MiB of newlines: over the row cap, refused before it is all inflated."""
    return gzip_bomb(size, b"\n")


def zlib_compressor():  # type: ignore[no-untyped-def]
    import zlib

    return zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)


def gzip_in_gzip(size: int) -> bytes:
    return gz(gz(good_lines()))


def zip_in_gzip(size: int) -> bytes:
    return gz(good_eval())


def parquet_rows(size: int) -> bytes:
    return parquet(size)


def parquet_named_jsonl(size: int) -> bytes:
    return parquet(10)


def csv_formula(size: int) -> bytes:
    """A count table whose group cells are spreadsheet formulas (kept as labels)."""
    return (b"group,value,n,correct\n" + b'"=HYPERLINK(""http://x"")",90,10,9\n' +
            b"@SUM(A1),70,10,7\n+1-1,50,10,5\n")


def csv_bad_value(size: int) -> bytes:
    return b"value,n,correct\n90,10,9\n=1+1,10,5\n"


def csv_huge_counts(size: int) -> bytes:
    """Counts beyond int64 and beyond a float's exact integers."""
    return b"value,n,correct\n90,10,9\n70," + b"9" * 30 + b",5\n"


def csv_rows(size: int) -> bytes:
    return gz(b"value,n,correct\n" + b"90,1,1\n" * size)


def csv_long_cell(size: int) -> bytes:
    return b"group,value,n,correct\n" + b"a" * size + b",90,1,1\n"


def eval_empty(size: int) -> bytes:
    return b""


def eval_deep_sample(size: int) -> bytes:
    bad = b'{"id": "deep", "epoch": 1, "scores": ' + deep(size) + b"}"
    return good_eval(extra=[("samples/deep_epoch_1.json", bad)])


def eval_parse_bomb(size: int) -> bytes:
    """A sample member of ``size`` bytes of empty arrays: small inflated, ~25x parsed."""
    n = max(1, (size - 100) // 3)
    bad = b'{"id": "bomb", "epoch": 1, "pad": [' + b"[]," * n + b'[]], "scores": {}}'
    return good_eval(extra=[("samples/bomb_epoch_1.json", bad)])


def eval_huge_header(size: int) -> bytes:
    """header.json with a ``size``-byte string in it."""
    head = inspect_header()
    head["pad"] = "x" * size
    return good_eval(header=json.dumps(head).encode())


def eval_deep_header(size: int) -> bytes:
    return good_eval(header=b'{"eval": ' + deep(size) + b"}")


def eval_many_members(size: int) -> bytes:
    return good_eval(n=size)


def eval_zip_slip(size: int) -> bytes:
    """Member names that would escape a folder if extracted (never extracted)."""
    s = json.dumps(inspect_sample(99, "slip")).encode()
    return good_eval(extra=[("samples/../../../../tmp/calib_zip_slip_epoch_1.json", s),
                            ("/tmp/calib_zip_slip_abs.json", s)])


def eval_surrogate_id(size: int) -> bytes:
    s = json.dumps(inspect_sample(98, "\ud800")).encode()
    return good_eval(extra=[("samples/sur_epoch_1.json", s)])


def json_log_deep(size: int) -> bytes:
    log = inspect_header()
    log["samples"] = [inspect_sample(i) for i in range(GOOD)]
    text = json.dumps(log).encode()
    return text[:-2] + b', {"id": "deep", "scores": ' + deep(size) + b"}]}"


def json_log_parse_bomb(size: int) -> bytes:
    log = inspect_header()
    log["samples"] = [inspect_sample(i) for i in range(GOOD)]
    text = json.dumps(log).encode()
    n = max(1, size // 3)
    return gz(text[:-2] + b', {"id": "bomb", "pad": [' + b"[]," * n + b"[]]}]}")


def logprobs_deep(size: int) -> bytes:
    return logprob_lines() + b'{"logprobs": [-1, -2], "gold": 0, "x": ' + deep(size) + b"}\n"


def logprobs_huge_numbers(size: int) -> bytes:
    return logprob_lines() + b"".join([
        b'{"logprobs": [-' + b"9" * 400 + b", -1], \"gold\": 0}\n",
        b'{"logprobs": [-' + b"9" * size + b", -1], \"gold\": 0}\n",
        b'{"logprobs": [-1e999, -1], "gold": 0}\n',
        b'{"logprobs": [-1, -2], "gold": ' + b"9" * size + b"}\n",
        b'{"id": "\\ud800", "logprobs": [-1, -2], "gold": 1}\n',
    ])


def lmeval_array_deep(size: int) -> bytes:
    """Old lm-eval: one JSON array, its last sample nested ``size`` deep."""
    items = b", ".join(json.dumps(lmeval_sample(i)).encode() for i in range(GOOD))
    return b"[" + items + b', {"doc_id": 99, "x": ' + deep(size) + b"}]"


def lmeval_deep_line(size: int) -> bytes:
    lines = b"".join(json.dumps(lmeval_sample(i)).encode() + b"\n" for i in range(GOOD))
    return lines + b'{"doc_id": 99, "filtered_resps": ' + deep(size) + b"}\n"


LMEVAL = "samples_hostile_2026-01-01T00-00-00.jsonl"
LMEVAL_ARRAY = "samples_hostile_2026-01-01T00-00-00.json"

CASES: tuple[Case, ...] = (
    Case("long_first_line.jsonl.gz", long_first_line, 1_100_000, 200_000_000, 0, ("line 1", "too long"), GOOD),
    Case("deep_line.jsonl", deep_line, 100_000, 450_000, 0, ("line 21", "nested too deeply"), GOOD),
    Case("deep_first_line.jsonl", deep_first_line, 100_000, 450_000, 0, ("line 1", "nested too deeply"), GOOD),
    Case("deep_array_line.jsonl", deep_array_line, 100_000, 450_000, 0, ("line 21", "nested too deeply"), GOOD),
    Case("huge_ints.jsonl", huge_ints, 5_000, 400_000, 0, ("line 21", "line 22", "line 23", "line 24"), GOOD),
    Case("int64_overflow.jsonl", int64_overflow, 0, 0, 0, ("line 23", "outside"), GOOD + 2),
    Case("lone_surrogates.jsonl", lone_surrogates, 0, 0, 0, ("line 23", "line 24"), GOOD + 2),
    Case("array_one_line.jsonl", array_one_line, GOOD, 100_000, 0, (), GOOD),  # read since issue 22
    Case("array_counts.json", array_counts, 0, 0, 0, (), 6),
    Case("nonfinite.jsonl", nonfinite_tokens, 0, 0, 0, ("line 21", "line 25", "nan/infinity"), GOOD),
    Case("boms.jsonl", boms, 0, 0, 0, ("line 21", "invalid json"), GOOD),
    Case("nul_bytes.jsonl", nul_bytes, 1_000, 4_000_000, 0, ("line 21", "line 22"), GOOD),
    Case("duplicate_keys.jsonl", duplicate_keys, 0, 0, 0, ("line 21", "twice"), GOOD),
    Case("binary_noise.jsonl", binary_noise, 4_000, 4_000_000, 2, ("line 1",)),
    Case("only_cr.jsonl", only_cr, 0, 0, 0, (), GOOD),  # read since issue 22
    Case("gzip_bomb.jsonl.gz", gzip_bomb, 1_100, 5_000, 2, ("decompresses to more than",)),
    Case("gzip_bomb_lines.jsonl.gz", gzip_bomb_lines, 8, 5_000, 2, ("more than 5,000,001 lines",)),
    Case("gzip_in_gzip.jsonl.gz", gzip_in_gzip, 0, 0, 2, ("compressed twice",)),
    Case("zip_in_gzip.eval.gz", zip_in_gzip, 0, 0, 0, (), GOOD),
    Case("parquet_rows.parquet", parquet_rows, 1_000_001, 200_000_000, 2, ("rows",)),
    Case("parquet_named.jsonl", parquet_named_jsonl, 0, 0, 0, (), 1),
    Case("csv_formula.csv", csv_formula, 0, 0, 0, (), 3),
    Case("csv_bad_value.csv", csv_bad_value, 0, 0, 2, ("row 2", "value")),
    Case("csv_huge_counts.csv", csv_huge_counts, 0, 0, 2, ("row 2", "n")),
    Case("csv_rows.csv.gz", csv_rows, 1_000_001, 1_000_001, 2, ("rows",)),
    Case("csv_long_cell.csv", csv_long_cell, 1_100_000, 4_000_000, 2, ("line 2", "too long")),
    Case("empty.eval", eval_empty, 0, 0, 2, ("empty",)),
    Case("deep_sample.eval", eval_deep_sample, 100_000, 4_000_000, 0, ("deep_epoch_1", "nested too deeply"), GOOD),
    Case("parse_bomb.eval", eval_parse_bomb, 12_000_000, 200_000_000, 0, ("bomb_epoch_1", "to parse"), GOOD),
    Case("huge_header.eval", eval_huge_header, 70_000_000, 200_000_000, 2, ("header.json",)),
    Case("deep_header.eval", eval_deep_header, 100_000, 4_000_000, 2, ("header.json", "nested too deeply")),
    Case("many_members.eval", eval_many_members, 10_000, 19_000, 0, (), 10_000),
    Case("zip_slip.eval", eval_zip_slip, 0, 0, 0, (), GOOD + 1),
    Case("surrogate_id.eval", eval_surrogate_id, 0, 0, 0, (), GOOD + 1),
    Case("deep_log.json", json_log_deep, 100_000, 2_000_000, 0, ("samples[20]", "nested too deeply"), GOOD),
    Case("parse_bomb_log.json.gz", json_log_parse_bomb, 12_000_000, 200_000_000, 2, ("to parse", ".eval")),
    Case("logprobs_deep.jsonl", logprobs_deep, 100_000, 450_000, 0, ("line 21", "nested too deeply"), GOOD),
    Case("logprobs_numbers.jsonl", logprobs_huge_numbers, 5_000, 400_000, 0, ("line 24", "gold"), GOOD + 4),
    Case(LMEVAL, lmeval_deep_line, 100_000, 450_000, 0, ("line 21", "nested too deeply"), GOOD),
    Case(LMEVAL_ARRAY, lmeval_array_deep, 100_000, 2_000_000, 0, ("sample 21", "nested too deeply"), GOOD),
)

# --------------------------------------------------------------- Parquet under a byte budget (issue 22)
def parquet_dict_group(size: int) -> bytes:
    """A count table of ``size`` rows sharing one 4,000-character group name, stored once
    in a Parquet dictionary (0.4 MB for a million rows; 4 GB expanded per row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    group = pa.DictionaryArray.from_arrays(pa.array([0] * size, pa.int32()), pa.array(["g" * 4000]))
    table = pa.table({"group": group, "value": pa.array([90.0] * size), "n": pa.array([1] * size),
                      "correct": pa.array([1] * size)})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _varint(x: int) -> bytes:
    out = bytearray()
    while x >= 0x80:
        out.append(x & 0x7F | 0x80)
        x >>= 7
    return bytes(out + bytes([x]))


def parquet_lying_footer(size: int, says: int = 10) -> bytes:
    """:func:`parquet` of ``size`` rows whose footer says it holds ``says``: the file's
    ``num_rows`` (FileMetaData field 3, Thrift compact: header byte 0x16, then the zigzag
    varint) is rewritten; the row groups' own counts, which the reader follows, are not."""
    data = parquet(size)
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    footer = data[start:-8]
    old = b"\x16" + _varint(2 * size)
    at = footer.index(old)  # FileMetaData's num_rows comes before the row groups'
    footer = footer[:at] + b"\x16" + _varint(2 * says) + footer[at + len(old):]
    return data[:start] + footer + len(footer).to_bytes(4, "little") + b"PAR1"


def parquet_distinct_text(size: int) -> bytes:
    """``size`` distinct 4,000-character group names, plain-encoded: zstd packs the
    shared filler (300,000 names: 1.2 GB decoded, about 4 MB on disk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf, block = io.BytesIO(), 10_000
    schema = pa.schema([("group", pa.string()), ("value", pa.float64()), ("n", pa.int64()), ("correct", pa.int64())])
    with pq.ParquetWriter(buf, schema, compression="zstd", use_dictionary=False) as w:
        for start in range(0, size, block):
            k = min(block, size - start)
            w.write_table(pa.table({"group": [f"{start + i:08d}" + "x" * 3992 for i in range(k)],
                                    "value": [90.0] * k, "n": [1] * k, "correct": [1] * k}, schema=schema))
    return buf.getvalue()


CASES += (
    Case("parquet_dict_group.parquet", parquet_dict_group, 100_000, 1_000_000, 0, (), 1),
    Case("parquet_lying_footer.parquet", parquet_lying_footer, 2_000_000, 60_000_000, 2,
         ("more than 1,000,000 rows", "metadata says 10")),
    Case("parquet_distinct_text.parquet", parquet_distinct_text, 40_000, 300_000, 2,
         ("decodes to more than 64 MB", "'group'")),
)

#: Cases whose file is compressed or sparse enough that the full size still fits in 5 MB.
BY_NAME = {c.name: c for c in CASES}


# --------------------------------------------------------------- issue 22: input forms and CPU
def gzip_members(size: int) -> bytes:
    """``size`` empty gzip members (20 bytes each) before the valid rows: linear, not quadratic."""
    return gzip.compress(b"", mtime=0) * size + gz(good_lines())


def gzip_padded(size: int) -> bytes:
    """Valid rows gzipped, then ``size`` + 512 zero bytes (the padding tape and ``dd`` leave)."""
    return gz(good_lines()) + b"\0" * (size + 512)


def plain_named_gz(size: int) -> bytes:
    """Valid rows, not compressed, in a file named ``.gz``."""
    return good_lines()


def utf16_powershell(size: int) -> bytes:
    """What PowerShell's ``>`` writes: UTF-16-LE with a byte-order mark, CRLF line ends."""
    return b"\xff\xfe" + good_lines(max(GOOD, size)).replace(b"\n", b"\r\n").decode().encode("utf-16-le")


def utf32_bom(size: int) -> bytes:
    return b"\x00\x00\xfe\xff" + good_lines(max(GOOD, size)).decode().encode("utf-32-be")


def utf16_no_bom(size: int) -> bytes:
    """UTF-16 without its mark: refused with a message naming UTF-16."""
    return good_lines(max(GOOD, size)).decode().encode("utf-16-le")


def logprobs_wide_rows(size: int) -> bytes:
    """Valid rows, then ``size`` rows of 10,000 options each (over the cap: bad lines)."""
    wide = b'{"logprobs": [' + b", ".join([b"-1.5"] * 10_000) + b'], "gold": 0}\n'
    return logprob_lines() + wide * size


def logprobs_at_the_cap(size: int) -> bytes:
    """``size`` rows of 1,000 options each (the most a row may have): linear in the options."""
    row = b'{"logprobs": [-0.5, ' + b", ".join([b"-2.5"] * 999) + b'], "gold": 0}\n'
    return logprob_lines() + row * size


def near_float_limit(size: int) -> bytes:
    """Confidences near the largest float (2 * v overflowed into a RuntimeWarning)."""
    return good_lines() + b'{"confidence": 1.7976931348623157e308, "correct": true}\n'


def bad_lines_first(size: int) -> bytes:
    """``size`` lines that are not JSON, then the valid rows (every valid row is kept)."""
    return b"x\n" * size + good_lines()


def array_records(size: int) -> bytes:
    """``json.dump(list_of_dicts, indent=2)``: a JSON array of records, not JSON Lines."""
    rows = [json.loads(line) for line in good_lines(max(GOOD, size)).splitlines()]
    return json.dumps(rows, indent=2).encode()


def array_deep_record(size: int) -> bytes:
    """A JSON array of records whose 21st record is nested ``size`` deep."""
    rows = b",\n".join(good_lines().splitlines())
    return b"[" + rows + b',\n{"confidence": 90, "correct": true, "x": ' + deep(size) + b"}]"


def many_groups(size: int) -> bytes:
    """``size`` one-row groups (``--group-key g``), gzipped; see :data:`GROUP_ARGS`."""
    return gz(b"".join(b'{"g": "group%06d", "confidence": %d, "correct": %s}\n'
                       % (i, 50 + 10 * (i % 5), b"true" if i % 2 else b"false") for i in range(size)))


#: ``calib audit`` options of the group cases.
GROUP_ARGS = ("--group-key", "g")


#: Issue 22's cases (input forms people produce, and inputs that cost quadratic CPU).
ISSUE22: tuple[Case, ...] = (
    Case("gzip_members.jsonl.gz", gzip_members, 2_000, 250_000, 0, (), GOOD),
    Case("gzip_padded.jsonl.gz", gzip_padded, 0, 4_000_000, 0, (), GOOD),
    Case("plain_named.jsonl.gz", plain_named_gz, 0, 0, 0, (), GOOD),
    Case("utf16_powershell.jsonl", utf16_powershell, 0, 48_000, 0, (), GOOD),
    Case("utf32_bom.jsonl", utf32_bom, 0, 24_000, 0, (), GOOD),
    Case("utf16_no_bom.jsonl", utf16_no_bom, 0, 48_000, 2, ("utf-16", "byte-order mark")),
    Case("bad_lines_first.jsonl", bad_lines_first, 25_000, 1_000_000, 0, ("line 1", "invalid json"), GOOD),
    Case("array_records.json", array_records, 0, 50_000, 0, (), GOOD),
    Case("array_deep_record.json", array_deep_record, 100_000, 2_000_000, 0, ("record 21", "nested too deeply"), GOOD),
    Case("many_groups.jsonl.gz", many_groups, 1_001, 100_000, 2, ("groups", "calib_max_groups"), args=GROUP_ARGS),
    Case("groups_at_the_cap.jsonl.gz", many_groups, 30, 1_000, 0, (), 30, args=GROUP_ARGS),
    Case("near_float_limit.jsonl", near_float_limit, 0, 0, 0, ("line 21", "outside"), GOOD),
    Case("logprobs_wide_rows.jsonl", logprobs_wide_rows, 2, 80, 0, ("line 21", "10,000 options"), GOOD),
    Case("logprobs_at_the_cap.jsonl", logprobs_at_the_cap, 20, 800, 0, (), GOOD + 20),
)
CASES = CASES + ISSUE22


# ---- issue 26 (confidence in words): a file of phrases with hostile confidences
def verbal_hostile(size: int) -> bytes:
    """:data:`GOOD` lines of phrases, then a ``size``-character phrase (line 21), an object
    for a phrase (line 22) and a number among phrases (line 23): each a bad line."""
    words = ("low", "medium", "high")
    good = b"".join(json.dumps({"id": i, "confidence": words[i % 3], "correct": i % 2 == 0}).encode() + b"\n"
                    for i in range(GOOD))
    return good + b"".join(json.dumps({"confidence": c, "correct": True}).encode() + b"\n"
                           for c in ("x" * size, {"nested": "high"}, 85))


CASES = CASES + (
    Case("verbal_hostile.jsonl", verbal_hostile, 100_000, 900_000, 0,
         ("line 21", "unknown phrase", "line 23", "number among phrases"), GOOD),
)
BY_NAME = {c.name: c for c in CASES}


# --------------------------------------------------------------- issue 26: the eval platforms' files
def deepeval_case(i: int) -> dict:
    """One DeepEval test case: a GEval judge score and an exact-match check."""
    return {"name": f"t{i}", "input": "q", "success": True, "metricsData": [
        {"name": "Correctness [GEval]", "score": 0.5 + 0.02 * i, "success": True, "evaluationModel": "gpt"},
        {"name": "Exact Match", "score": float(i % 2), "success": bool(i % 2)}]}


def deepeval_hostile(size: int) -> bytes:
    """Valid test cases, then: metricsData missing, of the wrong type, a case that is a
    list, a metric without a name, a score that is text, and a ``size``-byte reason."""
    cases = [deepeval_case(i) for i in range(GOOD)]
    huge = deepeval_case(99)
    huge["metricsData"][0]["reason"] = "x" * size
    huge["metricsData"][0]["score"] = None
    cases += [{"name": "missing"}, {"name": "wrong", "metricsData": {"a": 1}}, ["a", "list"],
              {"name": "noname", "metricsData": [{"score": 1}]},
              {"name": "text", "metricsData": [{"name": "Correctness [GEval]", "score": "high",
                                                "evaluationModel": "gpt"}]}, huge]
    return json.dumps({"testRunData": {"testCases": cases}}).encode()


def deepeval_deep(size: int) -> bytes:
    return b'{"testRunData": {"testCases": [' + deep(size) + b"]}}"


def promptfoo_result(i: int) -> dict:
    """One promptfoo result: an llm-rubric judge score and an equals check."""
    return {"id": f"r{i}", "testIdx": i, "promptIdx": 0, "provider": {"id": "echo"}, "vars": {"id": f"t{i}"},
            "success": True, "gradingResult": {"pass": True, "score": 1, "componentResults": [
                {"pass": bool(i % 2), "score": float(i % 2), "assertion": {"type": "equals"}},
                {"pass": True, "score": 0.5 + 0.02 * i, "assertion": {"type": "llm-rubric"}}]}}


def promptfoo_hostile(size: int) -> bytes:
    """Valid results, then: no gradingResult, componentResults of the wrong type, a component
    without an assertion, a result that is a number, a text score, and a ``size``-byte output."""
    res = [promptfoo_result(i) for i in range(GOOD)]
    huge = promptfoo_result(99)
    huge["response"] = {"output": "x" * size}
    huge["gradingResult"]["componentResults"][1]["score"] = [1, 2]
    text = promptfoo_result(98)
    text["gradingResult"]["componentResults"][1]["score"] = "high"
    res += [{"vars": {"id": "none"}}, {"vars": {"id": "wrong"}, "gradingResult": {"componentResults": "x"}},
            {"vars": {"id": "noassert"}, "gradingResult": {"componentResults": [{"pass": True}]}}, 7, text, huge]
    return json.dumps({"evalId": "eval-x", "results": {"version": 3, "results": res}}).encode()


def promptfoo_deep(size: int) -> bytes:
    return b'{"evalId": "e", "results": {"version": 3, "results": [' + deep(size) + b"]}}"


def langfuse_score(i: int, name: str = "correctness") -> dict:
    judge = name == "correctness"
    return {"id": f"s{i}{name}", "traceId": f"t{i}", "name": name, "source": "EVAL" if judge else "ANNOTATION",
            "dataType": "NUMERIC" if judge else "CATEGORICAL", "value": 0.5 + 0.02 * i if judge else 1.0,
            "stringValue": None if judge else ("correct" if i % 2 else "incorrect")}


def langfuse_hostile(size: int) -> bytes:
    """Valid scores as JSON Lines, then: no trace, a name of the wrong type, a value that is a
    list, a score that is a string, and a ``size``-byte comment."""
    recs = [s for i in range(GOOD) for s in (langfuse_score(i), langfuse_score(i, "human_label"))]
    huge = langfuse_score(99)
    huge["comment"] = "x" * size
    huge["value"] = [1, 2]
    recs += [{**langfuse_score(90), "traceId": None}, {**langfuse_score(91), "name": 5}, "score", huge,
             langfuse_score(99, "human_label")]
    return b"".join(json.dumps(r).encode() + b"\n" for r in recs)


def langsmith_hostile(size: int) -> bytes:
    """Valid runs' feedback, then: no run_id, a key that is a number, a feedback that is a
    list, a score that is an object, and a ``size``-byte comment."""
    fb = []
    for i in range(GOOD):
        fb += [{"run_id": f"r{i}", "key": "correctness", "score": 0.5 + 0.02 * i, "feedback_source": {"type": "model"}},
               {"run_id": f"r{i}", "key": "human", "score": i % 2, "feedback_source": {"type": "app"}}]
    fb += [{"key": "correctness", "score": 1}, {"run_id": "r90", "key": 5}, [1],
           {"run_id": "r99", "key": "correctness", "score": {"a": 1}, "comment": "x" * size,
            "feedback_source": {"type": "model"}},
           {"run_id": "r99", "key": "human", "score": 1, "feedback_source": {"type": "app"}}]
    return json.dumps({"feedback": fb}).encode()


def phoenix_hostile(size: int) -> bytes:
    """Valid span annotations as JSON Lines, then: no span, a kind of the wrong type, a record
    that is a list, a judge score that is text, and a ``size``-byte explanation."""
    recs = []
    for i in range(GOOD):
        recs += [{"span_id": f"s{i}", "annotation_name": "correctness", "annotator_kind": "LLM",
                  "result.score": 0.5 + 0.02 * i, "result.label": None},
                 {"span_id": f"s{i}", "annotation_name": "human", "annotator_kind": "HUMAN",
                  "result.label": "correct" if i % 2 else "incorrect", "result.score": None}]
    recs += [{"annotation_name": "correctness", "annotator_kind": "LLM", "result.score": 1},
             {"span_id": "s90", "annotation_name": "correctness", "annotator_kind": ["LLM"]}, [1],
             {"span_id": "s99", "annotation_name": "correctness", "annotator_kind": "LLM", "result.score": "high",
              "result.explanation": "x" * size},
             {"span_id": "s99", "annotation_name": "human", "annotator_kind": "HUMAN", "result.label": "correct"}]
    return b"".join(json.dumps(r).encode() + b"\n" for r in recs)


def otel_event(i: int, name: str, value: object) -> dict:
    key = "doubleValue" if isinstance(value, float) else "stringValue"
    return {"spanId": f"{i:016x}", "traceId": f"{i:032x}", "eventName": "gen_ai.evaluation.result",
            "attributes": [{"key": "gen_ai.evaluation.name", "value": {"stringValue": name}},
                           {"key": "gen_ai.evaluation.score.value", "value": {key: value}}]}


def otel_hostile(size: int) -> bytes:
    """Valid evaluation events, then: no evaluation name, no span nor response id, a record
    that is a number, attributes of the wrong type, and a ``size``-byte explanation."""
    recs = []
    for i in range(1, GOOD + 1):
        recs += [otel_event(i, "judge", 0.5 + 0.02 * i), otel_event(i, "check", float(i % 2))]
    noname = otel_event(90, "judge", 0.5)
    noname["attributes"] = noname["attributes"][1:]
    nospan = otel_event(91, "judge", 0.5)
    nospan["spanId"] = ""
    huge = otel_event(99, "judge", "high")
    huge["attributes"].append({"key": "gen_ai.evaluation.explanation", "value": {"stringValue": "x" * size}})
    recs += [noname, nospan, 7, {**otel_event(92, "judge", 0.5), "attributes": "x"}, huge,
             otel_event(99, "check", 1.0)]
    return json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": recs}]}]}).encode()


def openai_line(i: int) -> dict:
    """One Batch output line: the answer letter's top log-probs over A-D, and the gold."""
    top = [{"token": t, "logprob": lp} for t, lp in zip("ABCD", (-0.2 - 0.01 * i, -2.0, -3.0, -4.0), strict=True)]
    body = {"choices": [{"logprobs": {"content": [{"token": "A", "logprob": top[0]["logprob"],
                                                   "top_logprobs": top}]}}]}
    return {"custom_id": f"c{i}", "response": {"status_code": 200, "body": body}, "error": None,
            "gold": "AB"[i % 2]}


def openai_hostile(size: int) -> bytes:
    """Valid lines, then: no response, logprobs of the wrong type, a token that is a number,
    a line that is a list, and a ``size``-byte message content."""
    lines = [openai_line(i) for i in range(GOOD)]
    wrong = openai_line(91)
    wrong["response"]["body"]["choices"][0]["logprobs"] = "x"
    number = openai_line(92)
    number["response"]["body"]["choices"][0]["logprobs"]["content"] = [{"token": 7, "logprob": -1}]
    huge = openai_line(99)
    huge["response"]["body"]["choices"][0]["message"] = {"content": "x" * size}
    huge["gold"] = None
    lines += [{"custom_id": "c90", "error": None}, wrong, number, [1], huge]
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def mlflow_trace(i: int) -> dict:
    """One search_traces() record: an LLM_JUDGE feedback and a HUMAN one."""
    return {"trace_id": f"tr-{i}", "trace_metadata": {"mlflow.trace.session": f"s{i}"}, "assessments": [
        {"assessment_name": "correctness", "source": {"source_type": "LLM_JUDGE"}, "feedback": {"value": 0.5 + 0.02 * i}},
        {"assessment_name": "human", "source": {"source_type": "HUMAN"}, "feedback": {"value": bool(i % 2)}}]}


def mlflow_hostile(size: int) -> bytes:
    """Valid trace records as JSON Lines, then: no assessments, assessments of the wrong
    type, an assessment without a name, a feedback value that is an object, and a
    ``size``-byte rationale."""
    recs = [mlflow_trace(i) for i in range(GOOD)]
    obj = mlflow_trace(93)
    obj["assessments"][0]["feedback"]["value"] = {"a": 1}
    huge = mlflow_trace(99)
    huge["assessments"][0]["rationale"] = "x" * size
    huge["assessments"][0]["feedback"] = {"value": None, "error": {"error_code": "BOOM"}}
    recs += [{"trace_id": "tr-90", "trace_metadata": {}}, {"trace_id": "tr-91", "assessments": {"a": 1}},
             {"trace_id": "tr-92", "assessments": [{"feedback": {"value": 1}}]}, obj, huge]
    return b"".join(json.dumps(r).encode() + b"\n" for r in recs)


def helm_instance(i: int) -> dict:
    def stat(name: str, mean: float) -> dict:
        return {"name": {"name": name, "split": "test"}, "count": 1, "sum": mean, "mean": mean}
    return {"instance_id": f"id{i}", "train_trial_index": 0,
            "stats": [stat("max_prob", 0.5 + 0.02 * i), stat("exact_match", float(i % 2))]}


def helm_hostile(size: int) -> bytes:
    """Valid instances, then: no instance_id, stats of the wrong type, a stat without a
    name, an entry that is a list, and a ``size``-byte stat name."""
    docs = [helm_instance(i) for i in range(GOOD)]
    huge = helm_instance(99)
    huge["stats"][0]["name"]["name"] = "x" * size
    docs += [{"train_trial_index": 0, "stats": []}, {"instance_id": "id90", "stats": "x"},
             {"instance_id": "id91", "stats": [{"mean": 1}]}, [1], huge]
    return json.dumps(docs).encode()


def lighteval_hostile(size: int) -> bytes:
    """A lighteval details Parquet: valid samples, then: no logprobs, a gold outside the
    choices, a NaN log-likelihood, and a ``size``-byte prompt (never decoded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def row(i: int, lps: list[float], gold: int, query: str = "q") -> dict:
        return {"doc": {"query": query, "gold_index": gold, "id": f"s{i}"},
                "model_response": {"logprobs": lps}, "metric": {"acc": 1.0}}
    rows = [row(i, [-0.1 - 0.01 * i, -2.0, -3.0], i % 2) for i in range(GOOD)]
    rows += [row(90, [], 0), row(91, [-0.1, -2.0], 5), row(92, [float("nan"), -1.0], 0),
             row(93, [-0.1, -2.0], 0, "x" * size)]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf, compression="zstd")
    return buf.getvalue()


ISSUE26: tuple[Case, ...] = (
    Case("deepeval_hostile.json", deepeval_hostile, 2_000_000, 4_000_000, 0,
         ("record 21", "metricsData is missing", "record 22", "not a list", "sample text"), GOOD),
    Case("deepeval_deep.json", deepeval_deep, 100_000, 450_000, 2, ("nested too deeply",)),
    Case("promptfoo_hostile.json", promptfoo_hostile, 2_000_000, 4_000_000, 0,
         ("record 21", "componentresults is missing", "record 24", "not a json object", "sample t98"), GOOD),
    Case("promptfoo_deep.json", promptfoo_deep, 100_000, 450_000, 2, ("nested too deeply",)),
    Case("langsmith_hostile.json", langsmith_hostile, 2_000_000, 4_000_000, 0,
         ("record 41", "names no run", "record 42", "no key", "record 43", "sample r99"), GOOD),
    Case("phoenix_hostile.jsonl", phoenix_hostile, 900_000, 4_000_000, 0,
         ("line 41", "names no span", "line 42", "no annotator_kind", "line 43", "sample s99"), GOOD),
    Case("otel_hostile.json", otel_hostile, 2_000_000, 4_000_000, 0,
         ("record 41", "no gen_ai.evaluation.name", "record 42", "names no span", "record 43", "sample 0000000000000063"),
         GOOD),
    Case("openai_hostile.jsonl", openai_hostile, 900_000, 4_000_000, 0,
         ("line 21", "sample c90", "line 22", "logprobs", "line 23", "no answer letter", "line 24", "line 25", "no gold"),
         GOOD),
    Case("mlflow_hostile.jsonl", mlflow_hostile, 900_000, 4_000_000, 0,
         ("line 21", "sample tr-90", "line 22", "not a list", "line 23", "with a name", "sample tr-93", "boom"), GOOD),
    Case("per_instance_stats.json", helm_hostile, 2_000_000, 4_000_000, 0,
         ("record 21", "no instance_id", "record 22", "not a list", "record 23", "no name.name", "sample id99"),
         GOOD),
    Case("details_hostile_2026.parquet", lighteval_hostile, 2_000_000, 50_000_000, 0,
         ("row 21", "no choice log-likelihoods", "row 22", "not among the 2 choices", "row 23", "not a number"),
         GOOD + 1),
    Case("langfuse_hostile.jsonl", langfuse_hostile, 900_000, 4_000_000, 0,
         ("line 41", "names no trace", "line 42", "no name", "line 43", "sample t99"), GOOD),
)
CASES = CASES + ISSUE26
BY_NAME = {c.name: c for c in CASES}


# ---------------------------------------------------- issue 26: MLflow's SQLite tracking store
def mlflow_db(statements: list[tuple[str, tuple]]) -> bytes:
    """A SQLite database made in memory by ``statements``, as the bytes of its file."""
    import sqlite3

    con = sqlite3.connect(":memory:")
    for sql, params in statements:
        con.execute(sql, params)
    con.commit()
    data = con.serialize()
    con.close()
    return data


MLFLOW_TABLES = [
    ("CREATE TABLE trace_info (request_id VARCHAR(50) PRIMARY KEY, experiment_id INTEGER, timestamp_ms BIGINT, "
     "request_preview VARCHAR(1000), session_id VARCHAR(250))", ()),
    ("CREATE TABLE assessments (assessment_id VARCHAR(50), trace_id VARCHAR(50), name VARCHAR(250), "
     "assessment_type VARCHAR(20), value TEXT, error TEXT, created_timestamp BIGINT, source_type VARCHAR(50), "
     "valid BOOLEAN)", ()),
]


def mlflow_db_rows(i: int, judge: object = None, name: object = "correctness") -> list[tuple[str, tuple]]:
    """Trace ``tr-i`` with an LLM_JUDGE feedback (``judge``, else 0.5 + 0.02 i) and a HUMAN one."""
    ins = "INSERT INTO assessments VALUES (?, ?, ?, 'feedback', ?, NULL, ?, ?, 1)"
    return [("INSERT INTO trace_info VALUES (?, 1, ?, 'q', ?)", (f"tr-{i}", i, f"s{i}")),
            (ins, (f"a{i}", f"tr-{i}", name, json.dumps(0.5 + 0.02 * i) if judge is None else judge, i, "LLM_JUDGE")),
            (ins, (f"h{i}", f"tr-{i}", "human", json.dumps(bool(i % 2)), i, "HUMAN"))]


def mlflow_db_hostile(size: int) -> bytes:
    """An ``mlflow.db`` with valid traces, then: a judge value that is not JSON, one of the
    wrong type (a blob), an assessment whose name is a blob, a ``size``-character text
    value, and an assessment of a trace not in ``trace_info``."""
    rows = [r for i in range(GOOD) for r in mlflow_db_rows(i)]
    rows += mlflow_db_rows(90, "0.7 high") + mlflow_db_rows(91, b"\x00\xff") + mlflow_db_rows(92, name=b"\x01")
    rows += mlflow_db_rows(93, json.dumps("x" * size))
    rows += [("INSERT INTO assessments VALUES ('o', 'tr-none', 'correctness', 'feedback', '0.9', NULL, 0, "
              "'LLM_JUDGE', 1)", ())]
    return mlflow_db(MLFLOW_TABLES + rows)


def mlflow_db_not_mlflow(size: int) -> bytes:
    """A SQLite database of something else: no MLflow table."""
    return mlflow_db([("CREATE TABLE notes (t TEXT)", ()), ("INSERT INTO notes VALUES (?)", ("x" * size,))])


def mlflow_db_view(size: int) -> bytes:
    """``assessments`` a view (a crafted file's query), not a table: never read."""
    return mlflow_db([MLFLOW_TABLES[0], ("CREATE VIEW assessments AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                                         "SELECT x + 1 FROM c) SELECT x AS trace_id, 'n' AS name, 'feedback' AS "
                                         "assessment_type, '1' AS value, 'CODE' AS source_type, 1 AS valid FROM c", ())])


def mlflow_db_truncated(size: int) -> bytes:
    """A real store cut after its first page: the schema names pages that are not there."""
    return mlflow_db_hostile(10)[:4096] + b"\0" * size


ISSUE26_STORE: tuple[Case, ...] = (
    Case("mlflow_hostile.db", mlflow_db_hostile, 900_000, 4_000_000, 0,
         ("record 21", "sample tr-90", "not json", "record 22", "blob", "record 23", "with a name", "record 24",
          "not a number", "1 assessment(s) of traces not in trace_info"), GOOD),
    Case("mlflow_not_mlflow.db", mlflow_db_not_mlflow, 10_000, 1_000_000, 2, ("not an mlflow 3 tracking store",)),
    Case("mlflow_view.db", mlflow_db_view, 0, 0, 2, ("table assessments: no such table",)),
    Case("mlflow_truncated.db", mlflow_db_truncated, 8_192, 1_000_000, 2, ("mlflow",)),
)
CASES = CASES + ISSUE26_STORE
BY_NAME = {c.name: c for c in CASES}
