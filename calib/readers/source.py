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
    if name.lower().endswith(".gz") or data[:2] == b"\x1f\x8b":
        # one row per line: the row cap applies while inflating, before the bytes are held
        lined = strip_gz(name).lower().endswith((".jsonl", ".ndjson", ".csv"))
        data = gunzip_capped(data, name, options.max_decompressed_bytes,
                             max_lines=options.max_rows + 1 if lined else None)
    return Source(strip_gz(Path(name).name) if "/" in name else strip_gz(name), data)


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
    view = memoryview(data)
    total = lines = start = 0
    try:
        while True:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk: bytes | memoryview = view[start:]
            size = 0
            while chunk and not d.eof:
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
                chunk = d.unconsumed_tail
            if not d.eof:
                raise CalibError(f"{name}: the gzip stream is truncated")
            end = len(data) - len(d.unused_data)
            sizes.append((start, end, size))
            total += size
            if not d.unused_data:  # else: concatenated gzip members
                break
            start = end
    except zlib.error as exc:
        raise CalibError(f"{name}: not a valid gzip file ({exc})") from None
    # one allocation of exactly the final size per member: zlib then neither grows nor
    # shrinks (a shrink copies the whole buffer)
    parts = [zlib.decompress(view[a:b], 16 + zlib.MAX_WBITS, max(n, 1)) for a, b, n in sizes]
    out = parts[0] if len(parts) == 1 else b"".join(parts)
    if out[:2] == b"\x1f\x8b":
        raise CalibError(f"{name}: decompresses to another gzip stream (compressed twice?); "
                         "decompress it once more and load the result")
    return out


#: Piece size of the counting pass of :func:`gunzip_capped`.
_PIECE = 1 << 20


def _bomb_message(name: str, limit: int) -> str:
    return (
        f"{name}: decompresses to more than {limit:,} bytes ({megabytes(limit)} MB); refused, "
        "since a .gz that inflates past this cap may be a gzip bomb. If the file is genuine, "
        "raise the cap: on the dashboard with the environment variable CALIB_MAX_DECOMPRESSED_MB "
        "(in MB; restart the server after setting it), in Python with "
        "LoadOptions(max_decompressed_bytes=...); or decompress the file and load it uncompressed."
    )
