"""One input's bytes: read from a file or given, ``.gz`` decompressed under the cap.

A gzip bomb (a small ``.gz`` that inflates to gigabytes) is refused while it inflates,
before its output is held (:func:`gunzip_capped`); every reader then sees a
:class:`~calib.readers.base.Source` of plain bytes.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from calib.errors import CalibError
from calib.readers.base import LoadOptions, Source, megabytes


def strip_gz(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") else name


def read_source(path: str | Path, data: bytes | None = None, options: LoadOptions | None = None) -> Source:
    """Read one file (or given bytes), decompressing ``.gz`` under the cap."""
    options = options or LoadOptions()
    name = str(path)
    if data is None:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise CalibError(f"{name}: no such file") from None
        except IsADirectoryError:
            raise CalibError(f"{name}: is a folder; pass the folder to load_many") from None
        except OSError as exc:
            raise CalibError(f"{name}: cannot read ({exc.strerror})") from None
    notes: list[str] = []
    if data[:2] == GZIP_MAGIC:
        # one row per line: the row cap applies while inflating, before the bytes are held
        lined = strip_gz(name).lower().endswith((".jsonl", ".ndjson", ".csv"))
        data = gunzip_capped(data, name, options.max_decompressed_bytes,
                             max_lines=options.max_rows + 1 if lined else None)
    elif name.lower().endswith(".gz"):
        notes.append(f"{Path(name).name}: named .gz but not gzip-compressed (it does not start with the "
                     "gzip signature 1f 8b); read as the plain file it is")
    data = _as_utf8(data, name, notes)
    data = _cr_lines(data, name, notes)
    return Source(strip_gz(Path(name).name) if "/" in name else strip_gz(name), data, tuple(notes))


#: Byte-order marks of the encodings read besides UTF-8, longest first (UTF-32-LE's
#: mark begins with UTF-16-LE's).
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32"), (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32"),
         (b"\xff\xfe", "utf-16-le", "UTF-16"), (b"\xfe\xff", "utf-16-be", "UTF-16"))


def _as_utf8(data: bytes, name: str, notes: list[str]) -> bytes:
    """``data`` as UTF-8 when it starts with a UTF-16 or UTF-32 byte-order mark (PowerShell's
    ``>`` writes UTF-16-LE with one); refused, naming UTF-16, when such a file holds bytes
    that are not of its encoding or when it looks like UTF-16 without a mark."""
    base = Path(name).name
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(codec)
            except UnicodeDecodeError as exc:
                good = data[len(bom):len(bom) + exc.start].decode(codec)
                raise CalibError(
                    f"{name}: line {good.count(chr(10)) + 1}: bytes that are not {label} ({codec}) at byte "
                    f"{len(bom) + exc.start:,}, in a file that starts with a {label} byte-order mark; "
                    "save it again as UTF-8 (or as " + label + " throughout)"
                ) from None
            notes.append(f"{base}: read as {label} ({codec}, from its byte-order mark) and converted to UTF-8")
            return text.encode("utf-8")  # a strict decode leaves no lone surrogate to encode
    head = data[:4096]
    if len(head) >= 8 and head[:4] not in BINARY_MAGIC and _looks_utf16(head):
        order = "little-endian" if head[1::2].count(0) > head[0::2].count(0) else "big-endian"
        raise CalibError(
            f"{name}: looks like UTF-16 ({order}) without a byte-order mark (every other byte is 0); "
            "save it as UTF-8 (in PowerShell: Out-File -Encoding utf8), or as UTF-16 with its mark"
        )
    return data


def _looks_utf16(head: bytes) -> bool:
    """Text of ASCII characters in UTF-16: zero bytes in most of one parity, none in the other."""
    even, odd = head[0::2].count(0), head[1::2].count(0)
    half = len(head) // 2
    return (odd >= 0.9 * half and even == 0) or (even >= 0.9 * half and odd == 0)


def _cr_lines(data: bytes, name: str, notes: list[str]) -> bytes:
    """Bare carriage returns as line ends (old Mac OS) read as newlines: only in a file
    without a single newline, so that no CR inside a line of another file is touched
    (JSON allows none inside a string). Binary formats (zip, Parquet) are left alone."""
    if b"\r" not in data or b"\n" in data or data[:4] in BINARY_MAGIC:
        return data
    notes.append(f"{Path(name).name}: lines end with a bare carriage return (CR, old Mac OS): read as line ends")
    return data.replace(b"\r", b"\n")


def gunzip_capped(data: bytes, name: str, limit: int, *, max_lines: int | None = None) -> bytes:
    """Decompress gzip data, refusing output larger than ``limit`` bytes.

    ``limit`` is :attr:`LoadOptions.max_decompressed_bytes`: on the dashboard it comes
    from the environment variable ``CALIB_MAX_DECOMPRESSED_MB`` (read by
    :meth:`calib.limits.Limits.from_env`, default :data:`MAX_DECOMPRESSED_BYTES`, 200 MB),
    for the command line too; the Python API uses :data:`MAX_DECOMPRESSED_BYTES` unless a
    caller passes its own :class:`LoadOptions`. The refusal names the file,
    the cap and both ways to raise it. ``max_lines``: also refuse more newlines than
    this (a line-per-row input over the row cap), before anything is held.

    Two passes, so that neither a refusal nor an accepted file costs twice its size:
    the first inflates in 1 MB pieces, keeping nothing but the size of each gzip
    member (and the newline count), and refuses as soon as the cap is passed; the
    second inflates each member straight into a buffer of its known size. A file of
    several concatenated members briefly holds its output twice (they are joined).
    """
    sizes: list[tuple[int, int, int]] = []  # (start, end, inflated size) of each member
    total = lines = start = 0
    try:
        while True:
            end, size, lines = _count_member(data, start, name, limit, total, lines, max_lines)
            sizes.append((start, end, size))
            total += size
            if end == len(data):
                break
            if data[end] == 0 and not data[end:].strip(b"\0"):
                break  # zero padding after the last member (tape, dd): gzip(1) ignores it too
            start = end  # else: concatenated gzip members
    except zlib.error as exc:
        raise CalibError(f"{name}: not a valid gzip file ({exc})") from None
    # one allocation of exactly the final size per member: zlib then neither grows nor
    # shrinks (a shrink copies the whole buffer)
    view = memoryview(data)
    parts = [zlib.decompress(view[a:b], 16 + zlib.MAX_WBITS, n) for a, b, n in sizes if n]
    out = parts[0] if len(parts) == 1 else b"".join(parts)  # empty members add nothing
    if out[:2] == GZIP_MAGIC:
        raise CalibError(f"{name}: decompresses to another gzip stream (compressed twice?); "
                         "decompress it once more and load the result")
    return out


#: Piece size of the counting pass of :func:`gunzip_capped`.
_PIECE = 1 << 20
#: The first bytes of every gzip member.
GZIP_MAGIC = b"\x1f\x8b"
#: The first four bytes of the binary inputs (zip, Parquet), whose bytes are not text.
BINARY_MAGIC = (b"PK\x03\x04", b"PAR1", b"SQLi")


def _count_member(data: bytes, start: int, name: str, limit: int, total: int, lines: int,
                  max_lines: int | None) -> tuple[int, int, int]:
    """Inflate the member starting at ``start`` keeping nothing: ``(end, inflated size,
    newlines so far)``; refuses once ``total`` (the members before) plus its size passes
    ``limit``, or past ``max_lines`` newlines.

    The input is handed to zlib in pieces that start at 64 bytes and double (up to
    :data:`_PIECE`): zlib copies whatever follows the member's end into ``unused_data``,
    so handing it the rest of the file made each member cost the whole rest of the file
    (quadratic: 250,000 empty members took 150 s). This way a member costs at most about
    twice its own size plus 64 bytes."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    view = memoryview(data)
    pos, step, size = start, 64, 0
    while not d.eof:
        if d.unconsumed_tail:
            chunk: bytes | memoryview = d.unconsumed_tail
        elif pos < len(data):
            chunk = view[pos:pos + step]
            pos += len(chunk)
            step = min(2 * step, _PIECE)
        else:
            raise CalibError(f"{name}: the gzip stream is truncated")
        piece = d.decompress(chunk, _PIECE)
        size += len(piece)
        if total + size > limit:
            raise CalibError(_bomb_message(name, limit))
        if max_lines is not None:
            lines += piece.count(b"\n")
            if lines > max_lines:
                raise CalibError(
                    f"{name}: more than {max_lines:,} lines once decompressed; refused before "
                    "decompressing it all (raise CALIB_MAX_ROWS if this file is genuine, or aggregate it "
                    "to a count table value,n,correct)"
                )
    return pos - len(d.unused_data), size, lines


def _bomb_message(name: str, limit: int) -> str:
    return (
        f"{name}: decompresses to more than {limit:,} bytes ({megabytes(limit)} MB); refused, "
        "since a .gz that inflates past this cap may be a gzip bomb. If the file is genuine, "
        "raise the cap: on the dashboard with the environment variable CALIB_MAX_DECOMPRESSED_MB "
        "(in MB; restart the server after setting it), in Python with "
        "LoadOptions(max_decompressed_bytes=...); or decompress the file and load it uncompressed."
    )
