"""Limits that keep one upload, or one session, from taking a shared server down.

A hosted dashboard serves many people from one Python process (Streamlit runs every
browser session as a thread of the same process), so a single careless or hostile
input must be refused before it costs the others their memory or their CPU. The
limits below act in layers, cheapest first:

1. **Upload size** — ``server.maxUploadSize`` (MB), enforced by the Streamlit server
   before the bytes reach Python. Its knob is Streamlit's own environment variable
   ``STREAMLIT_SERVER_MAX_UPLOAD_SIZE`` (default 200, set in ``.streamlit/config.toml``);
   :attr:`Limits.max_upload_mb` reads the same variable so that the library refuses
   what the server would (for paths that do not pass through the upload widget).
2. **Decompressed size** — a ``.gz`` input is inflated with a cap
   (:func:`calib.readers.source.gunzip_capped`), so a gzip bomb (10 GB of zeros packed into
   10 MB) is refused. A first pass inflates in 1 MB pieces and keeps nothing, so the
   refusal costs a few MB, not the cap; a line-per-row input (``.jsonl``, ``.csv``)
   with more newlines than the row cap is refused in that pass too. An accepted file
   is then inflated into a buffer of exactly its size (once, not twice).
3. **Rows and line length** — :attr:`LoadOptions.max_rows` and
   :attr:`LoadOptions.max_line_chars`; readers refuse inputs over them by name. The
   line length is checked before a line is parsed, by the field sampler too.
4. **JSON documents** — an Inspect ``.eval`` member, a ``.json`` log, an old lm-eval
   array or a JSON count table: a member over :attr:`LoadOptions.max_json_bytes`
   (declared or inflated) or whose parse cost (:func:`calib.readers.jsonl.parse_cost`, an
   upper estimate of ``json.loads``' memory) is over :attr:`LoadOptions.max_parse_bytes`
   is refused before it is parsed, and nesting deeper than Python's recursion limit
   is reported (:func:`calib.readers.jsonl.json_loads`); for a sample it is a bad sample.
5. **Groups** — :attr:`LoadOptions.max_groups`: an input with more groups than this
   (``--group-key`` values, count-table groups; from a file, a glob, a DataFrame or
   arrays alike) is refused once loaded, before any
   per-group audit runs (:func:`check_groups`).
6. **Count tables** — :attr:`LoadOptions.max_cells` rows; a Parquet file is refused
   when its metadata declares more, then decoded batch by batch, its rows counted again
   and its decoded bytes kept under an eighth of :attr:`LoadOptions.max_parse_bytes`
   (text columns as dictionaries, never expanded per row), so that a footer that lies
   costs one batch; a CSV or JSONL table is parsed up to one row past the cap
   (:func:`calib.readers.counts.read_counts`).
7. **Memory per session and in total** — :class:`calib.hosting.budget.MemoryLedger` books the estimated
   in-memory size of every dataset a session holds (:func:`~calib.hosting.budget.estimated_bytes`) and
   refuses a dataset that would push the session over its budget, or the server over
   its total, with a message that says what to do.
8. **Heavy work at once** — :class:`calib.hosting.budget.HeavyGate`, a process-wide semaphore around
   parsing and resampling, so that at most ``heavy_jobs`` of them run at the same time
   and the peak memory of parsing is bounded by ``heavy_jobs`` times one input.

Every value comes from an environment variable with a documented default
(:meth:`Limits.from_env`); a value that does not parse is refused with a message that
names the variable.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from calib.errors import CalibError
from calib.readers.base import (
    MAX_CELLS,
    MAX_DECOMPRESSED_BYTES,
    MAX_GROUPS,
    MAX_JSON_BYTES,
    MAX_LINE_CHARS,
    MAX_PARSE_BYTES,
    MAX_ROWS,
    LoadOptions,
)

MB = 1024 * 1024

#: Environment variables read by :meth:`Limits.from_env`, with their defaults.
ENV_DEFAULTS: dict[str, str] = {
    "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "200",
    "CALIB_MAX_DECOMPRESSED_MB": str(MAX_DECOMPRESSED_BYTES // (1024 * 1024)),
    "CALIB_MAX_ROWS": str(MAX_ROWS),
    "CALIB_MAX_LINE_CHARS": str(MAX_LINE_CHARS),
    "CALIB_SESSION_MEMORY_MB": "1024",
    "CALIB_TOTAL_MEMORY_MB": "4096",
    "CALIB_HEAVY_JOBS": "2",
    "CALIB_HEAVY_WAIT_SECONDS": "30",
    "CALIB_MAX_CELLS": str(MAX_CELLS),
    "CALIB_MAX_JSON_MB": str(MAX_JSON_BYTES // (1024 * 1024)),
    "CALIB_MAX_PARSE_MB": str(MAX_PARSE_BYTES // (1024 * 1024)),
    "CALIB_MAX_GROUPS": str(MAX_GROUPS),
}


def env_int(env: Mapping[str, str], name: str, default: int, *, minimum: int = 0) -> int:
    """Read an integer setting; a bad value is a :class:`CalibError` naming the variable."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        raise CalibError(f"{name}={raw!r} is not a whole number (default {default})") from None
    if value < minimum:
        raise CalibError(f"{name}={raw!r} must be at least {minimum} (default {default})")
    return value


def env_float(env: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0) -> float:
    """Read a number setting; a bad value is a :class:`CalibError` naming the variable."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise CalibError(f"{name}={raw!r} is not a number (default {default:g})") from None
    if not np.isfinite(value) or value < minimum:
        raise CalibError(f"{name}={raw!r} must be a finite number of at least {minimum:g} (default {default:g})")
    return value


@dataclass(frozen=True)
class Limits:
    """The configured limits of one server process.

    Attributes
    ----------
    max_upload_mb:
        Largest upload, MB (``STREAMLIT_SERVER_MAX_UPLOAD_SIZE``, default 200). The
        Streamlit server enforces it; the library checks it again in :meth:`check_upload`.
    max_decompressed_mb:
        Largest decompressed size of one ``.gz`` input, MB (``CALIB_MAX_DECOMPRESSED_MB``,
        default 200, :data:`calib.readers.base.MAX_DECOMPRESSED_BYTES`).
    max_rows:
        Most rows of one input (``CALIB_MAX_ROWS``, default :data:`calib.readers.base.MAX_ROWS`).
    max_line_chars:
        Longest line / field of one input, characters (``CALIB_MAX_LINE_CHARS``,
        default :data:`calib.readers.base.MAX_LINE_CHARS`).
    session_memory_mb:
        Estimated memory one browser session may hold in datasets, MB
        (``CALIB_SESSION_MEMORY_MB``, default 1024; 0 = no per-session budget).
    total_memory_mb:
        Estimated memory all sessions of the process may hold together, MB
        (``CALIB_TOTAL_MEMORY_MB``, default 4096; 0 = no total budget). Set it to about
        two thirds of the container's memory.
    heavy_jobs:
        Heavy computations (parsing an upload, bootstrap, cross-fitted maps) that may
        run at once in the process (``CALIB_HEAVY_JOBS``, default 2).
    heavy_wait_s:
        How long a heavy computation waits for a free slot before it is refused with
        "the server is busy" (``CALIB_HEAVY_WAIT_SECONDS``, default 30).
    max_cells:
        Most rows of a count table (``CALIB_MAX_CELLS``, default :data:`calib.readers.base.MAX_CELLS`).
    max_json_mb:
        Largest JSON document parsed whole, MB: an Inspect member, a JSON count table
        (``CALIB_MAX_JSON_MB``, default 64).
    max_parse_mb:
        Most memory parsing one JSON document may take by
        :func:`calib.readers.jsonl.parse_cost`, MB (``CALIB_MAX_PARSE_MB``, default 512).
    max_groups:
        Most groups of one input (``CALIB_MAX_GROUPS``, default :data:`calib.readers.base.MAX_GROUPS`).
    """

    max_upload_mb: int = 200
    max_decompressed_mb: int = MAX_DECOMPRESSED_BYTES // MB
    max_rows: int = MAX_ROWS
    max_line_chars: int = MAX_LINE_CHARS
    session_memory_mb: int = 1024
    total_memory_mb: int = 4096
    heavy_jobs: int = 2
    heavy_wait_s: float = 30.0
    max_cells: int = MAX_CELLS
    max_json_mb: int = MAX_JSON_BYTES // MB
    max_parse_mb: int = MAX_PARSE_BYTES // MB
    max_groups: int = MAX_GROUPS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, max_upload_mb: int | None = None) -> Limits:
        """Limits from environment variables (see :data:`ENV_DEFAULTS`).

        Parameters
        ----------
        env:
            The environment (default ``os.environ``).
        max_upload_mb:
            The server's effective ``server.maxUploadSize`` when the caller knows it
            (the dashboard passes ``st.get_option("server.maxUploadSize")``, which also
            sees ``config.toml``); overrides the environment variable.
        """
        env = os.environ if env is None else env
        d = cls()
        upload = env_int(env, "STREAMLIT_SERVER_MAX_UPLOAD_SIZE", d.max_upload_mb, minimum=1)
        return cls(
            max_upload_mb=int(max_upload_mb) if max_upload_mb is not None else upload,
            max_decompressed_mb=env_int(env, "CALIB_MAX_DECOMPRESSED_MB", d.max_decompressed_mb, minimum=1),
            max_rows=env_int(env, "CALIB_MAX_ROWS", d.max_rows, minimum=1),
            max_line_chars=env_int(env, "CALIB_MAX_LINE_CHARS", d.max_line_chars, minimum=80),
            session_memory_mb=env_int(env, "CALIB_SESSION_MEMORY_MB", d.session_memory_mb),
            total_memory_mb=env_int(env, "CALIB_TOTAL_MEMORY_MB", d.total_memory_mb),
            heavy_jobs=env_int(env, "CALIB_HEAVY_JOBS", d.heavy_jobs, minimum=1),
            heavy_wait_s=env_float(env, "CALIB_HEAVY_WAIT_SECONDS", d.heavy_wait_s),
            max_cells=env_int(env, "CALIB_MAX_CELLS", d.max_cells, minimum=1),
            max_json_mb=env_int(env, "CALIB_MAX_JSON_MB", d.max_json_mb, minimum=1),
            max_parse_mb=env_int(env, "CALIB_MAX_PARSE_MB", d.max_parse_mb, minimum=1),
            max_groups=env_int(env, "CALIB_MAX_GROUPS", d.max_groups, minimum=1),
        )

    def load_options(self, options: LoadOptions | None = None) -> LoadOptions:
        """``options`` (default: all auto-detected) with this server's caps applied.

        The caps replace whatever ``options`` held: they are the server's, not the
        user's, and a stored share is reloaded under today's caps."""
        return dataclasses.replace(
            options or LoadOptions(),
            max_rows=self.max_rows,
            max_line_chars=self.max_line_chars,
            max_decompressed_bytes=self.max_decompressed_mb * MB,
            max_cells=self.max_cells,
            max_json_bytes=self.max_json_mb * MB,
            max_parse_bytes=self.max_parse_mb * MB,
            max_groups=self.max_groups,
        )

    def check_upload(self, name: str, nbytes: int) -> None:
        """Refuse an input larger than the upload cap, naming it and the cap."""
        if nbytes > self.max_upload_mb * MB:
            raise CalibError(
                f"{name}: {nbytes / MB:,.1f} MB is more than this server accepts "
                f"({self.max_upload_mb} MB per file); compress it (.gz) or upload a count table"
            )


def check_groups(count: int, name: str, limit: int, key: str | None = None) -> None:
    """Refuse an input of more than ``limit`` groups (:attr:`LoadOptions.max_groups`)
    before the per-group work: each group gets an audit of its own."""
    if count > limit:
        what = f"distinct values of the group field {key!r}" if key else "groups"
        raise CalibError(
            f"{name}: {count:,} groups ({what}), over the {limit:,} one input may have: each group "
            "gets an audit of its own. Group by a coarser field, or raise CALIB_MAX_GROUPS "
            "(LoadOptions(max_groups=...) in Python) if this is genuine"
        )
