"""The Python API's inputs: a path, a DataFrame, an Arrow table or arrays, read as a file is.

:func:`load` turns whatever a notebook holds into a :class:`~calib.dataset.Dataset`
by the same rules as ``calib audit FILE``: a path goes to :func:`calib.loading.load`;
a pandas or polars DataFrame, a pyarrow Table (or RecordBatch), a mapping of column
name to values, or bare arrays (``confidence=[...]``, ``outcome=[...]``) are written
as the JSON lines the stated reader reads (one object per row, ``null`` for a
missing value: pandas' and polars' NaN in a float column included; an infinite
float stays ``Infinity``, refused as ``NaN/Infinity`` as in a file) and read by it. So
field detection, the scale rules, the bad-row reasons and the load report are the
file's, with no second set of rules to drift: "line N" in the report is row ``N - 1``
(0-based) of the frame.

Field arguments name columns (``confidence="conf"``, ``outcome="correct"``,
``group="subject"``, ``cluster="item"``, ``id="qid"``, ``prediction=``/``gold=`` to
derive the outcome); ``None`` detects them as in a file. With no data, they hold the
values themselves. Errors name the Python argument (``confidence="conf": no such
column; columns are ...``), never a command-line flag: the loader's messages are
reworded by :func:`python_words`.

:func:`audit`, :func:`fit`, :func:`route` (= :func:`decide`) and :func:`compare` load
and call the engine (:func:`calib.audit.audit`, :func:`calib.maps.fit`,
:func:`calib.decision.decide`, :func:`calib.compare.compare`) with the defaults of
:mod:`calib.settings` and the decision package; the notebook face
(:mod:`calib.present.notebook`) wraps their results for display.

Nothing heavy is imported at module level: ``import calib`` stays light.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calib.errors import CalibError

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.runs.audit import Audit, Comparison
    from calib.runs.decide import Decision
    from calib.runs.maps import FitResult
    from calib.runs.settings import Settings
    from calib.runs.traffic import Traffic

#: Field arguments and the :class:`~calib.readers.base.LoadOptions` attribute (or
#: ``extra`` key) each sets; the order is the order of columns built from bare arrays.
FIELDS: tuple[tuple[str, str], ...] = (
    ("confidence", "confidence_key"), ("outcome", "outcome_key"), ("group", "group_key"),
    ("cluster", "cluster_key"), ("id", "id_key"), ("prediction", "pred_key"), ("gold", "gold_key"),
)
#: Command-line words in the loader's messages and the Python argument a notebook user sets.
_FLAG_WORDS: tuple[tuple[str, str], ...] = (
    ("--confidence-key", "confidence="), ("--outcome-key", "outcome="), ("--group-key", "group="),
    ("--cluster-key", "cluster="), ("--id-key", "id="), ("--pred-key", "prediction="),
    ("--gold-key", "gold="), ("--rescale", "scale="), ("--mixed-scales", "mixed_scales=True"),
    ("--strict", "strict=True"), ("CALIB_MAX_ROWS", "CALIB_MAX_ROWS (environment)"),
)
_ALIAS_RE = re.compile(r" \(or --[a-z-]+\)")
_FLAG_RE = re.compile("|".join(re.escape(f) for f, _ in _FLAG_WORDS[:-1]))


def python_words(message: str) -> str:
    """A loader message with its command-line flags replaced by the Python arguments."""
    words = dict(_FLAG_WORDS)
    message = _ALIAS_RE.sub("", message)  # "(or --prob-key)": the flag's aliases mean nothing here
    return _FLAG_RE.sub(lambda m: words[m.group(0)], message)


@dataclass(frozen=True)
class Fields:
    """The field arguments of one call: column names, or (with no data) the values."""

    confidence: Any = None
    outcome: Any = None
    group: Any = None
    cluster: Any = None
    id: Any = None
    prediction: Any = None
    gold: Any = None

    def given(self) -> list[tuple[str, Any]]:
        return [(arg, getattr(self, arg)) for arg, _ in FIELDS if getattr(self, arg) is not None]


def load(
    data: Any = None, *, confidence: Any = None, outcome: Any = None, group: Any = None, cluster: Any = None,
    id: Any = None, prediction: Any = None, gold: Any = None, scale: str | tuple[float, float] | None = None,
    mixed_scales: bool = False, strict: bool = False, name: str | None = None, format: str = "auto",
    phrases: str | Sequence[str] | None = None, traffic: bool = False,
) -> Dataset | Traffic:
    """Load a path, a DataFrame, an Arrow table, a mapping of columns or bare arrays.

    ``scale`` is ``"0,100"`` or ``(0, 100)`` (the file's ``--rescale``); ``format``
    one of :data:`calib.loading.FORMATS` for a path; ``phrases`` the order of a
    confidence in words, lowest first (``"low,medium,high"`` or a list: the file's
    ``--phrases``, :mod:`calib.verbal`). See the module docstring.
    ``traffic=True``: the input is traffic, items without outcomes (``outcome=`` is
    refused): returns :func:`load_traffic`'s :class:`~calib.traffic.read.Traffic`, never a
    dataset an audit could run on. Without it a missing outcome drops its row, as in a file.
    """
    if traffic:
        if outcome is not None or prediction is not None or gold is not None:
            raise CalibError("traffic=True: traffic has no outcomes (they come from labels); drop outcome=, "
                             "prediction=, gold=")
        return load_traffic(data, confidence=confidence, group=group, cluster=cluster, id=id, scale=scale,
                            mixed_scales=mixed_scales, strict=strict, name=name, format=format)
    fields = Fields(confidence, outcome, group, cluster, id, prediction, gold)
    words = None if phrases is None else (phrases if isinstance(phrases, str) else tuple(str(p) for p in phrases))
    try:
        return _load(data, fields, scale=scale, mixed_scales=mixed_scales, strict=strict, name=name, fmt=format,
                     phrases=words)
    except CalibError as exc:
        raise CalibError(python_words(str(exc))) from None


def load_traffic(data: Any = None, *, confidence: Any = None, group: Any = None, cluster: Any = None,
                 id: Any = None, scale: str | tuple[float, float] | None = None, mixed_scales: bool = False,
                 strict: bool = False, name: str | None = None, format: str = "auto") -> Traffic:
    """Traffic (items a judge scored, no outcomes) from a path, bytes, a DataFrame, an Arrow
    table, a mapping of columns or bare arrays (``confidence=[...]``, ``id=[...]``), read as
    ``calib plan`` reads a file (:func:`calib.traffic.read.load_traffic`)."""
    from calib.runs.traffic import Traffic
    from calib.runs.traffic import load_traffic as load_file

    fields = Fields(confidence, None, group, cluster, id)
    try:
        if isinstance(data, Traffic):
            return data
        if isinstance(data, str | Path | bytes):
            for arg, val in fields.given():
                if not isinstance(val, str):
                    raise CalibError(f"{arg}=: with a path, name the field (a string), got {type(val).__name__}")
            opts = _options(fields, scale, mixed_scales, strict)
            if isinstance(data, bytes):
                return load_file(name or "traffic", data, options=opts, fmt=format)
            return load_file(str(data), options=opts, fmt=format)
        if data is None:
            if confidence is None:
                raise CalibError("no data: pass a path or a DataFrame, or the values themselves as confidence=[...]")
            cols, fields = _from_arrays(fields, need_outcome=False)
        else:
            cols = columns(data)
            _check_columns(cols, fields)
        what = "arrays" if data is None else f"{type(data).__module__.split('.')[0]} {type(data).__name__}"
        return load_file(what, jsonl_bytes(cols), options=_options(fields, scale, mixed_scales, strict),
                         fmt="stated")
    except CalibError as exc:
        raise CalibError(python_words(str(exc))) from None


def _load(data: Any, fields: Fields, *, scale: Any, mixed_scales: bool, strict: bool, name: str | None,
          fmt: str, phrases: str | tuple[str, ...] | None = None) -> Dataset:
    from calib.dataset import Dataset
    from calib.loading import load as load_file

    if isinstance(data, Dataset):
        return data
    if data is None:
        cols, fields = _from_arrays(fields)
    elif isinstance(data, str | Path):
        for arg, val in fields.given():
            if not isinstance(val, str):
                raise CalibError(f"{arg}=: with a path, name the field (a string), got {type(val).__name__}")
        return load_file(str(data), name=name, options=_options(fields, scale, mixed_scales, strict, phrases), fmt=fmt)
    else:
        cols = columns(data)
        _check_columns(cols, fields)
    body = jsonl_bytes(cols)
    # the report's source says what was read (a frame has no file name)
    what = "arrays" if data is None else f"{type(data).__module__.split('.')[0]} {type(data).__name__}"
    return load_file(what, data=body, name=name or "data",
                     options=_options(fields, scale, mixed_scales, strict, phrases), fmt="stated")


def _options(fields: Fields, scale: Any, mixed_scales: bool, strict: bool,
             phrases: str | tuple[str, ...] | None = None) -> Any:
    """The loader's options, under the same limits as the command line (the environment's)."""
    from calib.limits import Limits
    from calib.readers.base import LoadOptions
    from calib.scale import parse_rescale

    keys = {attr: getattr(fields, arg) for arg, attr in FIELDS if getattr(fields, arg) is not None}
    extra = {k: keys.pop(k) for k in ("pred_key", "gold_key") if k in keys}
    if scale is not None and not isinstance(scale, str):
        try:
            lo, hi = scale
        except (TypeError, ValueError):
            raise CalibError(f"scale={scale!r}: give two numbers, (0, 100) or \"0,100\"") from None
        scale = f"{lo},{hi}"
    return Limits.from_env().load_options(LoadOptions(
        **keys, rescale=parse_rescale(scale) if scale is not None else None, mixed_scales=bool(mixed_scales),
        strict=bool(strict), phrases=phrases, extra=extra,
    ))


def columns(data: Any) -> dict[str, list[Any]]:
    """A pandas/polars DataFrame, pyarrow Table or RecordBatch, or a mapping of columns,
    as Python lists by column name (pandas' index dropped; a missing value, NaN included,
    is ``None``). A column Arrow cannot type (a pandas object column mixing numbers and
    text) keeps its Python values, so that each is judged as a file's would be."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        return {name: _arrow_list(col) for name, col in zip(data.column_names, data.columns, strict=True)}
    mod = type(data).__module__.split(".")[0]
    if mod == "polars" and hasattr(data, "to_arrow"):
        return columns(data.to_arrow())
    if mod == "pandas":
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            return {str(name): _any_list(data[name]) for name in data.columns}  # a column named 0 reads as "0"
    if isinstance(data, Mapping):
        cols = {str(k): _any_list(_column(v)) for k, v in data.items()}
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise CalibError(f"data: the columns differ in length ({', '.join(f'{n:,}' for n in sorted(lengths))})")
        return cols
    raise CalibError(
        f"data: expected a path, a pandas or polars DataFrame, a pyarrow Table or a mapping of columns, "
        f"got {type(data).__name__}"
    )


def _arrow_list(col: Any) -> list[Any]:
    """An Arrow column as Python values, a float NaN as ``None`` (a DataFrame's missing value)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if pa.types.is_floating(col.type):
        col = pc.if_else(pc.is_nan(col), pa.scalar(None, col.type), col)
    return col.to_pylist()


def _any_list(values: Any) -> list[Any]:
    """Values (a Series, an array, a list) through Arrow when it can type them, else as
    they are with pandas' missing markers (None, NaN, NaT, NA) as ``None``."""
    import pyarrow as pa

    try:
        return _arrow_list(pa.array(values, from_pandas=True))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        pass
    out = []
    for v in list(values):
        if v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType"):
            out.append(None)
        else:
            out.append(v.item() if hasattr(v, "item") and type(v).__module__ == "numpy" else v)
    return out


def _column(values: Any) -> Any:
    """Values as a sequence (numpy arrays, Series and polars Series pass as they are)."""
    if hasattr(values, "to_arrow"):  # a polars Series
        return values.to_arrow()
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise CalibError(f"expected a sequence of values, got {type(values).__name__}")
    return values if hasattr(values, "__array__") or hasattr(values, "__len__") else list(values)


def _from_arrays(fields: Fields, need_outcome: bool = True) -> tuple[dict[str, list[Any]], Fields]:
    """Bare arrays as columns named after the arguments."""
    given = fields.given()
    names = [arg for arg, _ in given]
    if "confidence" not in names or (need_outcome and "outcome" not in names
                                     and not {"prediction", "gold"} <= set(names)):
        raise CalibError("no data: pass a path or a DataFrame, or the values themselves as confidence=[...] and "
                         "outcome=[...]")
    cols: dict[str, Any] = {}
    for arg, val in given:
        try:
            cols[arg] = _any_list(_column(val))
        except CalibError as exc:
            raise CalibError(f"{arg}=: {exc}") from None
    lengths = {arg: len(v) for arg, v in cols.items()}
    if len(set(lengths.values())) > 1:
        said = ", ".join(f"{arg}= has {n:,}" for arg, n in lengths.items())
        raise CalibError(f"the arrays differ in length: {said}")
    return cols, Fields(**{arg: arg for arg in names})


def _check_columns(cols: dict[str, list[Any]], fields: Fields) -> None:
    """Each named column exists (a dotted name may reach into a column of objects)."""
    names = list(cols)
    for arg, val in fields.given():
        if not isinstance(val, str):
            raise CalibError(f"{arg}=: with a DataFrame, name the column (a string), got {type(val).__name__}")
        if val in cols:
            continue
        head = val.split(".", 1)[0]
        if "." in val and head in cols and any(isinstance(v, dict) for v in cols[head][:100]):
            continue
        shown = ", ".join(names[:30]) + (f" and {len(names) - 30} more" if len(names) > 30 else "")
        raise CalibError(f"{arg}={val!r}: no such column; columns are {shown or '(none)'}")


def jsonl_bytes(cols: dict[str, list[Any]]) -> bytes:
    """One JSON object per row, as the stated reader reads them (``None`` is ``null``;
    dates and times ISO strings, bytes decoded as UTF-8, an infinite float ``Infinity``)."""
    names = list(cols)
    dumps = json.JSONEncoder(default=_json_default, ensure_ascii=False, allow_nan=True).encode
    lines = [dumps(dict(zip(names, vals, strict=True))) for vals in zip(*cols.values(), strict=True)]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass") if lines else b""


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    try:
        x = float(obj)  # Decimal, numpy scalars
    except (TypeError, ValueError):
        return str(obj)
    return x


# ------------------------------------------------------------------ the calls
def _split_load(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(load arguments, the rest) of a call's keyword arguments."""
    load_keys = {arg for arg, _ in FIELDS} | {"scale", "mixed_scales", "strict", "name", "format", "phrases"}
    return {k: v for k, v in kwargs.items() if k in load_keys}, {k: v for k, v in kwargs.items() if k not in load_keys}


def _dataset(data: Any, load_args: dict[str, Any]) -> Dataset:
    from calib.dataset import Dataset
    from calib.table import CountTable

    if isinstance(data, CountTable):
        from calib.loadreport import LoadReport

        fields = sorted(k for k in load_args if k != "name")
        if fields:
            raise CalibError(f"{fields[0]}=: a count table has no fields to choose")
        return Dataset(load_args.get("name") or "data", data,
                       LoadReport(source="count table", format="counts", lines_read=data.cells, kept=data.cells))
    if isinstance(data, Dataset) and load_args:
        raise CalibError(f"{sorted(load_args)[0]}=: the dataset is already loaded; pass the path or frame instead")
    return data if isinstance(data, Dataset) else load(data, **load_args)


def audit(data: Any = None, *, scheme: str = "auto", bins: int | None = None, reps: int | None = None,
          seed: int = 0, level: float = 0.95, below: float | None = None, **load_args: Any) -> tuple[Audit, Dataset]:
    """Load and audit: ``(the engine's Audit, the dataset)``; the load arguments are
    :func:`load`'s. Unknown keyword arguments are refused by name."""
    from calib.runs.audit import audit as run
    from calib.runs.settings import Settings
    from calib.settings import BINS, REPS

    ds = _dataset(data, _known(load_args, "audit"))
    if ds.table.total == 0:
        raise CalibError(f"nothing to audit: {ds.report.summary()}")
    s = Settings(scheme=scheme, bins=BINS if bins is None else bins, reps=REPS if reps is None else reps,
                 seed=seed, level=level, below=below)
    return run(ds, s), ds


def fit(data: Any = None, method: str = "platt", *, eval_data: Any = None, **kwargs: Any) -> FitResult:
    """Load and fit a recalibration map (:func:`calib.maps.fit`; ``eval_data`` loaded
    with the same field arguments)."""
    from calib.runs.maps import fit as run

    load_args, rest = _split_load(kwargs)
    ds = _dataset(data, load_args)
    ev = None if eval_data is None else _dataset(eval_data, load_args)
    extra = {k: rest.pop(k) for k in ("correction", "logits") if k in rest}
    return run(ds, _settings("fit", rest, _FIT_NAMES, method=method), eval_data=ev, **extra)


def route(data: Any = None, *, target: float | None = None, confidence_level: float | None = None,
          capacity: int | str | None = None, by_group: bool | None = None, **kwargs: Any) -> Decision:
    """Load and decide the review threshold (:func:`calib.decision.decide`).

    ``confidence_level`` is the guarantee's 1 - δ (``confidence=`` names the column);
    ``capacity`` is items (200) or a share (``"20%"``); ``by_group`` defaults to
    "when ``group=`` is given". Other keywords go to ``decide`` (``cost_review``,
    ``cost_miss``, ``cost_right``, ``fit``, ``reps``, ``seed``, ``level``, ``simultaneous``).
    """
    from calib.runs.decide import decide as run

    load_args, rest = _split_load(kwargs)
    ds = _dataset(data, load_args)
    if target is not None:
        rest["target"] = target
    if confidence_level is not None:
        rest["confidence"] = confidence_level
    if capacity is not None:
        rest["capacity"] = str(capacity)
    rest["by_group"] = (load_args.get("group") is not None) if by_group is None else by_group
    extra = {k: rest.pop(k) for k in ("calibration", "fit") if k in rest}
    return run(ds, _settings("decide", rest, _DECIDE_NAMES), **extra)


#: :func:`route` under the engine's name.
decide = route


def compare(data: Sequence[Any] | Mapping[str, Any], **kwargs: Any) -> Comparison:
    """Several models side by side (:func:`calib.compare.compare`): a list of inputs
    (named ``data``, ``data (2)``...) or a mapping name -> input, each loaded with the
    same field arguments."""
    from calib.runs.audit import compare as run

    load_args, rest = _split_load(kwargs)
    at = rest.pop("at", 0.9)
    if isinstance(data, str | Path) or not isinstance(data, Sequence | Mapping):
        raise CalibError("data: compare wants several inputs, a list or a mapping name -> input")
    items = list(data.items()) if isinstance(data, Mapping) else [(None, d) for d in data]
    models: dict[str, Any] = {}
    for key, item in items:
        ds = _dataset(item, {**load_args, **({"name": str(key)} if key is not None else {})})
        name, k = ds.name, 2
        while name in models:
            name, k = f"{ds.name} ({k})", k + 1
        models[name] = ds.table
    return run(models, _settings("compare", rest, _COMPARE_NAMES), at=at)


#: The engine functions' keyword arguments a notebook call may pass, and the
#: :class:`~calib.runs.settings.Settings` field each one sets.
_STATS = {"reps": "reps", "seed": "seed", "level": "level"}
_FIT_NAMES = {**_STATS, "scoring": "scoring", "folds": "folds", "bins": "hist_bins", "hist_scheme": "hist_scheme",
              "ece_scheme": "scheme", "ece_bins": "bins"}
_DECIDE_NAMES = {**_STATS, **{k: k for k in ("target", "confidence", "cost_review", "cost_miss", "cost_right",
                                             "capacity", "by_group", "simultaneous", "procedure")}}
_COMPARE_NAMES = {**_STATS, "scheme": "scheme", "bins": "bins"}


def _settings(fn: str, given: dict[str, Any], names: Mapping[str, str], **fixed: Any) -> Settings:
    """One :class:`~calib.runs.settings.Settings` from the keyword arguments of ``fn`` (named
    as the engine's function names them); an unknown one is refused by name, as Python would."""
    from calib.runs.settings import Settings

    unknown = sorted(set(given) - set(names))
    if unknown:
        raise TypeError(f"{fn}() got an unexpected keyword argument {unknown[0]!r}")
    return Settings(**fixed, **{names[k]: v for k, v in given.items()})


def _known(load_args: dict[str, Any], fn: str) -> dict[str, Any]:
    """``load_args`` when every key is a load argument; else the unknown one, by name."""
    args, rest = _split_load(load_args)
    if rest:
        raise CalibError(f"{fn}() got an unexpected argument {sorted(rest)[0]}=")
    return args
