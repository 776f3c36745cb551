"""Loading: recognise an input's format, call its reader, build the dataset.

Only recognition and dispatch live here. Readers live in :mod:`calib.readers` (one
module per format, sharing :mod:`calib.readers.base` and :mod:`calib.readers.jsonl`);
each takes a :class:`~calib.readers.base.Source` and
:class:`~calib.readers.base.LoadOptions` and returns ``(Judgments, LoadReport)``
(:data:`~calib.readers.base.Read`), a folder of lm-eval files too. This module infers
the clusters of dependent rows (:func:`calib.clusters.infer`, from what the reader read)
and turns that into a :class:`~calib.dataset.Dataset` with its count table; a count
table (CSV, Parquet, JSON) is read by :func:`calib.readers.counts.read_counts` (a
:class:`~calib.table.CountTable`), and a glob by
:func:`calib.readers.warehouse.load_glob`, which returns the dataset itself (reduced in
SQL, it has no rows).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable
from pathlib import Path

from calib import clusters
from calib.dataset import Dataset
from calib.errors import CalibError
from calib.limits import check_groups
from calib.loadreport import LoadReport
from calib.readers.base import PLATFORMS, LoadOptions, Read, Source
from calib.readers.counts import read_counts
from calib.readers.jsonl import array_as_lines, json_loads, records_named
from calib.readers.source import read_source, strip_gz
from calib.rows import Judgments
from calib.scale import rescale_warnings
from calib.table import from_judgments

FORMATS = ("stated", "logprobs", "lmeval", "inspect", "counts", *PLATFORMS)


def sniff_format(name: str, data: bytes) -> str:
    """Recognise the format of one input from its name and first bytes."""
    low = strip_gz(name).lower()
    if low.endswith(".eval") or data[:4] == b"PK\x03\x04":
        return "inspect"
    if data[:16] == b"SQLite format 3\x00":  # the one SQLite file calib reads: MLflow's mlflow.db
        return "mlflow"
    if low.replace("\\", "/").rsplit("/", 1)[-1].startswith("details_") and low.endswith(".parquet"):
        return "lighteval"  # lighteval's details_{task}_{date}.parquet
    if low.endswith(".csv") or low.endswith(".parquet"):
        return "counts"
    head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    base = low.replace("\\", "/").rsplit("/", 1)[-1]
    # lm-eval: samples_<task>_<date>.jsonl (a first line can outgrow the sniffed head with
    # few-shot prompts) and results_<date>.json (read only to say it has no samples)
    if base.startswith("samples_") and base.endswith((".jsonl", ".json")) and head[:1] in (b"{", b"["):
        return "lmeval"
    if head[:1] == b"{" and (head.startswith(b'{"doc_id"') or (
            base.startswith("results_") and base.endswith(".json") and b'"lm_eval_version"' in data)):
        return "lmeval"
    # the eval platforms' whole-file JSON (calib.readers.verdicts), before Inspect's
    if head[:1] in (b"{", b"[") and (platform := _platform(head)):
        return platform
    # a whole-file JSON object: Inspect's .json log
    if head[:1] == b"{" and low.endswith(".json") and (b'"eval"' in data[:4096] or b'"samples"' in data):
        return "inspect"
    if data[:4] == b"PAR1":  # Parquet under another name
        return "counts"
    first = _first_object(head)
    if first is None:
        if head[:1] == b"[":
            if b"filtered_resps" in head:
                return "lmeval"
            # a JSON array: a count table when its rows have the count columns; else the
            # stated reader says that one object per line was expected
            return "counts" if all(k in head.lower() for k in (b'"value"', b'"n"', b'"correct"')) else "stated"
        return "stated"
    keys = set(first)
    if {"filtered_resps", "doc"} <= keys or "resps" in keys and "doc" in keys:
        return "lmeval"
    if keys & {"logprobs", "choice_logprobs", "option_logprobs", "logits", "option_probs", "choice_probs", "probs"}:
        return "logprobs"
    if {"value", "n", "correct"} <= {k.lower() for k in keys}:
        return "counts"
    return "stated"


def _platform(head: bytes) -> str | None:
    """The eval platform whose whole-file JSON ``head`` starts (its top-level keys come first)."""
    top = head[:4096]
    if top.startswith(b'{"testRunData"') or b'"testCases"' in top and b'"metricsData"' in head:
        return "deepeval"
    if b'"evalId"' in top[:300] and b'"results"' in top or b'"gradingResult"' in head and b'"promptIdx"' in head:
        return "promptfoo"
    if (b'"run_id"' in top and b'"feedback_source"' in top) or (
            re.match(rb'[\[{]\s*"(runs|feedback)"\s*:\s*\[', top) and (b'"trace_id"' in top or b'"run_id"' in top)):
        return "langsmith"
    if b'"trace_id"' in top and (b'"trace_metadata"' in top or b'"assessment_name"' in head):
        return "mlflow"
    if b'"eval.run.output_item"' in top or b'"custom_id"' in top and b'"status_code"' in top or (
            b'"chat.completion"' in top and b'"top_logprobs"' in head):
        return "openai"
    if b'"instance_id"' in top and b'"train_trial_index"' in top and b'"stats"' in top:
        return "helm"
    if b'"resourceLogs"' in top[:200]:  # OTLP/JSON logs
        return "otel"
    if b'"annotator_kind"' in top and b'span_id"' in top:
        return "phoenix"
    if b'"dataType"' in top and b'"source"' in top and any(k in top for k in (b'"traceId"', b'"subject"', b'"observationId"', b'"sessionId"')):
        return "langfuse"
    return None


def _first_object(head: bytes, limit: int = 50) -> dict | None:
    """The first JSON object among the first ``limit`` lines of ``head``."""
    for raw in head.split(b"\n")[:limit]:
        raw = raw.strip().lstrip(b"\xef\xbb\xbf")
        if not raw:
            continue
        try:
            obj = json_loads(raw)
        except ValueError:  # also nested too deeply (JsonLimitError)
            continue
        if isinstance(obj, dict):
            return obj
    return None


def field_names(data: bytes, limit: int = 50) -> list[str]:
    """Keys of the first JSON object in a JSONL input (one level of nesting as ``a.b``),
    for choosing a field by hand. Empty when the input is not JSONL."""
    obj = _first_object(data[:262144], limit)
    if obj is None:
        return []
    out: list[str] = []
    for k, val in obj.items():
        out.append(str(k))
        if isinstance(val, dict):
            out.extend(f"{k}.{k2}" for k2 in val if not isinstance(val[k2], dict | list))
    return out


def load(
    path: str | Path,
    data: bytes | None = None,
    *,
    name: str | None = None,
    options: LoadOptions | None = None,
    fmt: str = "auto",
) -> Dataset:
    """Load one input file (or uploaded bytes) into a :class:`Dataset`.

    Parameters
    ----------
    path:
        File path, or the uploaded file's name when ``data`` is given. A folder
        (an lm-eval output folder) is read with :func:`load_many`.
    data:
        The file's bytes, when they come from an upload.
    name:
        Dataset name (model/judge); defaults to the file name without extensions.
    fmt:
        One of :data:`FORMATS` or ``"auto"`` (sniffed from name and content).
    """
    options = options or LoadOptions()
    if data is None and _is_glob_input(path):  # logs bigger than memory: reduced in DuckDB
        from calib.readers.warehouse import load_glob

        return load_glob(str(path), name=name, options=options)
    if (run := folder_file(path, data)) is not None:
        name, path = name or Path(path).name, run
    if data is None and Path(path).is_dir():
        files = sorted(p for p in Path(path).iterdir() if p.is_file())
        return load_many([(str(p), p.read_bytes()) for p in files], name=name or Path(path).name, options=options)
    src = read_source(path, data, options)
    ds_name = name or _default_name(src.name)
    kind = sniff_format(src.name, src.data) if fmt == "auto" else fmt
    if kind not in FORMATS:
        raise CalibError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    records = kind in ("stated", "logprobs") and (array := array_as_lines(src, options)) is not None
    if records:  # json.dump(list_of_dicts): one record per line, then sniffed again
        src = array
        kind = sniff_format(src.name, src.data) if fmt == "auto" else kind
    if kind == "counts":
        ds = _load_counts(src, ds_name, options)
    else:
        rows, report = _read_rows(src, kind, options, records)
        ds = _dataset(ds_name, rows, report, options)
    if src.notes:  # what was done to the bytes before the reader saw them (read_source)
        ds = dataclasses.replace(ds, report=dataclasses.replace(ds.report, notes=src.notes + ds.report.notes))
    return ds


def _read_rows(src: Source, kind: str, options: LoadOptions, records: bool) -> Read:
    rows, report = _reader(kind)(src, options)
    if records:
        report = dataclasses.replace(report, issues=records_named(report.issues))
    return rows, report


#: Subfolders of a folder looked at for an MLflow file store's experiments (``<id>/traces``).
STORE_PEEK = 200


def folder_file(path: str | Path, data: bytes | None) -> Path | None:
    """The one file read of a tool's folder: a HELM run folder's ``per_instance_stats.json``
    (:mod:`calib.readers.helm`), the ``mlflow.db`` of a folder MLflow tracked into
    (:mod:`calib.readers.mlflow_store`); ``None`` when ``path`` is no such folder.

    An MLflow file store (``mlruns/``: ``<experiment>/traces/<trace>/trace_info.yaml``,
    which MLflow 3 writes only with ``MLFLOW_ALLOW_FILE_STORE=true``) is refused with
    MLflow's own conversion to ``mlflow.db``."""
    if data is None and Path(path).is_dir():
        folder = Path(path)
        for name in ("per_instance_stats.json", "mlflow.db"):
            if (folder / name).is_file():
                return folder / name
        for root in (folder, folder / "mlruns"):
            try:
                subs = list(itertools.islice(root.iterdir(), STORE_PEEK)) if root.is_dir() else []
            except OSError:  # unreadable: the folder's own reading says so
                subs = []
            if any((p / "traces").is_dir() for p in subs if p.is_dir()):
                raise CalibError(
                    f"{folder.name}: an MLflow file store (mlruns/); calib reads MLflow's SQLite store: convert "
                    f"it with MLflow's own `mlflow migrate-filestore --source {root} "
                    "--target sqlite:///mlflow.db` and give mlflow.db (or a search_traces() export)")
    return None


def read_rows(path: str | Path, data: bytes | None = None, *, options: LoadOptions, fmt: str = "auto"
              ) -> tuple[Source, str, Read | None]:
    """One input's rows as its reader returns them, clustered (:func:`calib.clusters.infer`),
    without the count table: ``(source, format, (rows, report))``; ``None`` in place of the
    rows for a CSV or Parquet input (:mod:`calib.traffic.read` reads a CSV of traffic items).

    Traffic (``options.traffic``) is read this way: its outcomes are placeholders, so it
    never becomes a :class:`~calib.dataset.Dataset` an audit could be run on."""
    src = read_source(folder_file(path, data) or path, data, options)
    kind = sniff_format(src.name, src.data) if fmt == "auto" else fmt
    if kind not in FORMATS:
        raise CalibError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    records = kind in ("stated", "logprobs") and (array := array_as_lines(src, options)) is not None
    if records:
        src = array
        kind = sniff_format(src.name, src.data) if fmt == "auto" else kind
    if kind == "counts":
        return src, kind, None
    rows, report = _read_rows(src, kind, options, records)
    rows, report = clusters.infer(rows, report, options)
    if src.notes:
        report = dataclasses.replace(report, notes=src.notes + report.notes)
    return src, kind, (rows, report)


def load_many(
    files: list[tuple[str, bytes]], *, name: str, options: LoadOptions | None = None
) -> Dataset:
    """Load several files as one dataset (an lm-eval output folder: one file per task,
    the task as the group). Files that are not samples (``results_*.json``) are skipped
    and named in the report's notes."""
    from calib.readers import lmeval

    options = options or LoadOptions()
    rows, report = lmeval.read_folder(files, name=name, options=options)
    return _dataset(name, rows, report, options)


def _dataset(name: str, rows: Judgments, report: LoadReport, options: LoadOptions) -> Dataset:
    """A reader's result as a dataset. Dependent rows (Inspect epochs, repeated ids,
    ``--cluster-key``; across a folder, a repeated task/doc_id) are clustered first, so
    that intervals resample clusters."""
    rows, report = clusters.infer(rows, report, options)
    table = from_judgments(rows)
    check_groups(len(table.groups), report.source, options.max_groups, options.group_key)
    return Dataset(name, table, report, rows)


def _load_counts(src: Source, name: str, options: LoadOptions) -> Dataset:
    """A count table (value, n, correct) as a dataset without rows."""
    table = read_counts(src.name, scale=options.rescale, data=src.data, max_rows=options.max_cells,
                        max_line=options.max_line_chars, max_parse=options.max_parse_bytes)
    check_groups(len(table.groups), src.name, options.max_groups)
    # --rescale 0,100 on a table of values 1 to 9: said, not applied silently
    warnings = tuple(rescale_warnings(table.value[table.n > 0], options.rescale)) if options.rescale else ()
    report = LoadReport(
        source=src.name, format="counts", lines_read=table.cells, kept=table.cells,
        fields={"value": "value", "n": "n", "correct": "correct"},
        scale=table.scale.to_dict(),
        notes=(f"count table: {table.total:,} judgments in {table.cells:,} cells",)
        + tuple(f"warning: {w}" for w in warnings),
        warnings=warnings,
    )
    return Dataset(name, table, report, None)


def _reader(kind: str) -> Callable[[Source, LoadOptions], Read]:
    """The reader of ``kind``, imported when first needed (``calib --help`` stays light)."""
    if kind == "stated":
        from calib.readers.stated import read
    elif kind == "logprobs":
        from calib.readers.logprobs import read
    elif kind == "lmeval":
        from calib.readers.lmeval import read
    elif kind == "inspect":
        from calib.readers.inspect import read
    elif kind == "deepeval":
        from calib.readers.deepeval import read
    elif kind == "promptfoo":
        from calib.readers.promptfoo import read
    elif kind == "langfuse":
        from calib.readers.langfuse import read
    elif kind == "langsmith":
        from calib.readers.langsmith import read
    elif kind == "phoenix":
        from calib.readers.phoenix import read
    elif kind == "otel":
        from calib.readers.otel import read
    elif kind == "openai":
        from calib.readers.openai import read
    elif kind == "mlflow":
        from calib.readers.mlflow import read
    elif kind == "helm":
        from calib.readers.helm import read
    elif kind == "lighteval":
        from calib.readers.lighteval import read
    else:  # pragma: no cover - guarded by FORMATS
        raise CalibError(f"no reader for {kind}")
    return read


def _is_glob_input(path: str | Path) -> bool:
    """A glob pattern, or a folder of Parquet files only (:mod:`calib.readers.warehouse`)."""
    if not any(c in str(path) for c in "*?[") and not Path(path).is_dir():
        return False  # a plain file: the reader module is not even imported
    from calib.readers.warehouse import is_glob_input

    return is_glob_input(path)


def _default_name(filename: str) -> str:
    base = Path(filename).name
    for ext in (".jsonl", ".json", ".eval", ".csv", ".parquet", ".ndjson"):
        if base.lower().endswith(ext):
            return base[: -len(ext)]
    return base
