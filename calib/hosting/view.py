"""The dashboard's view state: everything a copied link must reproduce.

A :class:`View` holds the choices a person makes while reading an audit (which
sample files, which model, how the reliability diagram is binned, which
recalibration map and how it is scored, where the review threshold sits, the
costs). It is a frozen value: the dashboard builds a new one when a widget moves.

:func:`to_params` and :func:`from_params` translate it to and from the URL's query
parameters. Reading is forgiving by design: a link is user input, so a value that
does not parse or is out of range falls back to its default (and is named in the
returned notes) instead of failing the page. Values equal to the default are left
out of the URL, so a link only carries what was changed.

This module is pure (no Streamlit): the dashboard (:mod:`dashboard.state`) calls it on every run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from calib import settings
from calib.thresholds import band_upper

#: Pages of the dashboard, in navigation order (the entry ``app.py`` is ``"data"``).
PAGES: tuple[str, ...] = ("data", "overview", "scale", "reliability", "recalibration", "routing", "report",
                          "drift", "review")
#: Reliability-diagram binnings: automatic (per value when the values are few, else
#: equal-width), per distinct value, equal-width, equal-mass, CORP isotonic curve.
SCHEMES: tuple[str, ...] = settings.DIAGRAM_SCHEMES
#: Recalibration maps (``"none"`` = use the stated confidence as is).
METHODS: tuple[str, ...] = ("none", *settings.METHODS)
#: How a map is scored (:data:`calib.settings.SCORINGS`).
SCORINGS: tuple[str, ...] = settings.SCORINGS
#: What the review threshold is set on: the stated value or the recalibrated probability.
THRESHOLD_ON: tuple[str, ...] = settings.THRESHOLD_ON
#: Confidence levels offered for intervals.
LEVELS: tuple[float, ...] = settings.LEVELS

#: Bounds of numeric settings (inclusive).
BINS_RANGE = (2, 100)
REPS_RANGE = (0, 20_000)
FOLDS_RANGE = (2, 20)
SEED_RANGE = (0, 2**32 - 1)
COST_RANGE = (0.0, 1e9)
#: Longest text value taken from a link (a model name, a sample file name).
MAX_TEXT = 200
#: Most sample files a link can select.
MAX_SAMPLES = 20

_SAMPLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class View:
    """What is shown: one value per setting, each with a default.

    Attributes
    ----------
    page:
        One of :data:`PAGES`. The page normally travels in the URL path; it is
        written to the query parameters only for share links (see :func:`to_params`).
    samples:
        File names (no folders) of the files from ``sample_data/`` that are loaded.
    model:
        Name of the dataset the single-model views focus on (``""``: the first one).
    scheme, bins:
        Reliability binning (:data:`SCHEMES`) and number of bins for ``width``/``mass``.
    reps, seed, level:
        Bootstrap resamples, random seed and confidence level of every interval.
    method, scoring, folds, eval_model:
        Recalibration map (:data:`METHODS`), how it is scored (:data:`SCORINGS`),
        folds for ``kfold``, and the dataset a map is scored on for ``file``.
    on:
        Whether thresholds are on the stated scale or on the recalibrated probability.
    lo, hi:
        Review threshold (items below ``lo`` go to a person) and optional upper
        threshold (items at or above ``hi`` are accepted unseen). ``None`` means
        "not set": the dashboard then uses its default for the data's scale. In
        the units of :attr:`on`: stated values, or probabilities in [0, 1].
    cost_review, cost_miss:
        Cost of one human review and of one error accepted unseen.
    cost_right:
        Cost of reviewing an item that was right anyway, or ``None``: the same as
        ``cost_review``.
    target:
        Target error rate among accepted items (alpha of the recommended threshold), or
        ``None``: the engine's default (:data:`calib.settings.DEFAULT_TARGET`, see
        :func:`target_error`).
    confidence:
        Confidence ``1 - delta`` of the recommended threshold's guarantee.
    capacity:
        Reviewers' capacity as typed: ``"200"`` items or ``"20%"`` of the items
        (``""``: none); parsed by :func:`calib.decision.parse_capacity`.
    """

    page: str = "data"
    samples: tuple[str, ...] = ()
    model: str = ""
    scheme: str = "auto"
    bins: int = settings.BINS
    reps: int = settings.REPS
    seed: int = 0
    level: float = settings.LEVEL
    method: str = "none"
    scoring: str = "oddeven"
    folds: int = 5
    eval_model: str = ""
    on: str = "stated"
    lo: float | None = None
    hi: float | None = None
    cost_review: float = 0.0
    cost_miss: float = 0.0
    target: float | None = None
    confidence: float = settings.DEFAULT_CONFIDENCE
    capacity: str = ""
    cost_right: float | None = None


DEFAULT = View()


def target_error(view: View) -> float:
    """The target error rate alpha of the view: its own, or the engine's default."""
    return settings.DEFAULT_TARGET if view.target is None else view.target


#: Query parameter name of each field (short, stable: they appear in shared links).
PARAM_NAMES: dict[str, str] = {
    "page": "page",
    "samples": "sample",
    "model": "model",
    "scheme": "scheme",
    "bins": "bins",
    "reps": "reps",
    "seed": "seed",
    "level": "level",
    "method": "map",
    "scoring": "scoring",
    "folds": "folds",
    "eval_model": "eval",
    "on": "on",
    "lo": "lo",
    "hi": "hi",
    "cost_review": "cost_review",
    "cost_miss": "cost_miss",
    "target": "target",
    "confidence": "confidence",
    "capacity": "capacity",
    "cost_right": "cost_right",
}
#: Every query parameter this module reads (others are ignored, e.g. a hosting ``share`` token).
PARAMS: frozenset[str] = frozenset(PARAM_NAMES.values())


# ----------------------------------------------------------------- to the URL
def _fmt_number(x: float) -> str:
    """Shortest text that reads back to the same float (``80`` not ``80.0``)."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def to_params(view: View, *, include_page: bool = False) -> dict[str, str]:
    """The query parameters of a view: only settings that differ from the default.

    Parameters
    ----------
    view:
        The view to write.
    include_page:
        Also write :attr:`View.page` (for share links, whose URL path is the entry page).
    """
    out: dict[str, str] = {}
    for f in fields(View):
        name = f.name
        if name == "page" and not include_page:
            continue
        value = getattr(view, name)
        if value == getattr(DEFAULT, name) and name != "page":
            continue
        key = PARAM_NAMES[name]
        if name == "samples":
            out[key] = ",".join(value)
        elif value is None:  # an optional number not set, where the default is set
            out[key] = ""
        elif isinstance(value, bool):  # pragma: no cover - no bool fields today
            out[key] = "1" if value else "0"
        elif isinstance(value, int | float):
            out[key] = _fmt_number(value)
        else:
            out[key] = str(value)
    return out


# --------------------------------------------------------------- from the URL
def _first(raw: object) -> str | None:
    """A query value as one string (``st.query_params`` gives str; a test may give a list)."""
    if isinstance(raw, list | tuple):
        raw = raw[-1] if raw else None
    if raw is None:
        return None
    return str(raw)


def _choice(text: str, options: tuple[str, ...]) -> str:
    t = text.strip().lower()
    if t not in options:
        raise ValueError("not one of " + ", ".join(options))
    return t


def _int_in(text: str, lo: int, hi: int) -> int:
    x = float(text.strip())
    if not math.isfinite(x) or x != round(x):
        raise ValueError("not a whole number")
    i = int(x)
    if not lo <= i <= hi:
        raise ValueError(f"outside {lo}..{hi}")
    return i


def _float_in(text: str, lo: float, hi: float) -> float:
    x = float(text.strip())
    if not math.isfinite(x):
        raise ValueError("not a finite number")
    if not lo <= x <= hi:
        raise ValueError(f"outside {lo:g}..{hi:g}")
    return x


def _optional_float(text: str) -> float | None:
    if text.strip() == "":
        return None
    x = float(text.strip())
    if not math.isfinite(x):
        raise ValueError("not a finite number")
    return x


def _text(text: str) -> str:
    t = text.strip()
    if len(t) > MAX_TEXT:
        raise ValueError(f"longer than {MAX_TEXT} characters")
    if any(ord(c) < 32 for c in t):
        raise ValueError("contains control characters")
    return t


def _samples(text: str, available: tuple[str, ...] | None) -> tuple[str, ...]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if len(names) > MAX_SAMPLES:
        raise ValueError(f"more than {MAX_SAMPLES} files")
    for s in names:
        # a sample is a file name inside sample_data/: never a path
        if not _SAMPLE_NAME.match(s) or ".." in s or len(s) > MAX_TEXT:
            raise ValueError("not a sample file name")
        if available is not None and s not in available:
            raise ValueError("no such sample file")
    return tuple(dict.fromkeys(names))


def from_params(
    params: Mapping[str, object], *, available_samples: tuple[str, ...] | None = None
) -> tuple[View, tuple[str, ...]]:
    """Read a view from query parameters, falling back to defaults on bad values.

    Parameters
    ----------
    params:
        Query parameters (``st.query_params.to_dict()``); unknown keys are ignored.
    available_samples:
        When given, sample names not in it are dropped.

    Returns
    -------
    view, notes:
        The view, and one note per ignored parameter naming it and why (the bad
        value itself is not repeated: it is user input).
    """
    parsers = {
        "page": lambda t: _choice(t, PAGES),
        "samples": lambda t: _samples(t, available_samples),
        "model": _text,
        "scheme": lambda t: _choice(t, SCHEMES),
        "bins": lambda t: _int_in(t, *BINS_RANGE),
        "reps": lambda t: _int_in(t, *REPS_RANGE),
        "seed": lambda t: _int_in(t, *SEED_RANGE),
        "level": lambda t: _level(t),
        "method": lambda t: _choice(t, METHODS),
        "scoring": lambda t: _choice(t, SCORINGS),
        "folds": lambda t: _int_in(t, *FOLDS_RANGE),
        "eval_model": _text,
        "on": lambda t: _choice(t, THRESHOLD_ON),
        "lo": _optional_float,
        "hi": _optional_float,
        "cost_review": lambda t: _float_in(t, *COST_RANGE),
        "cost_miss": lambda t: _float_in(t, *COST_RANGE),
        "target": lambda t: None if t.strip() == "" else _float_in(t, 0.0, 1.0),
        "confidence": _level,
        "capacity": check_capacity,
        "cost_right": lambda t: None if t.strip() == "" else _float_in(t, *COST_RANGE),
    }
    values: dict[str, object] = {}
    notes: list[str] = []
    for name, parse in parsers.items():
        key = PARAM_NAMES[name]
        raw = _first(params.get(key))
        if raw is None:
            continue
        try:
            values[name] = parse(raw)
        except (ValueError, OverflowError) as exc:
            # float()'s own message quotes the text: the note must not repeat user input
            reason = "not a number" if str(exc).startswith("could not convert") else str(exc)
            notes.append(f"link setting '{key}' ignored: {reason}")
    view = replace(DEFAULT, **values)
    view, more = validate(view)
    return view, tuple(notes) + more


def _level(text: str) -> float:
    x = float(text.strip())
    # accept 95 as well as 0.95
    if x > 1:
        x /= 100
    if not 0.5 <= x < 1:
        raise ValueError("a confidence level is between 0.5 and 1")
    return x


#: A capacity as typed: a whole number of items, or a percentage of the items.
_CAPACITY = re.compile(r"^(\d{1,12}|\d{1,3}(\.\d{1,6})?%)$")


def check_capacity(text: str) -> str:
    """A capacity (``"200"``, ``"20%"``; ``""``: none), checked by shape only: whether
    it fits the data is the engine's call (:func:`calib.decision.costs.capacity_items`)."""
    t = text.strip().replace(" ", "")
    if t == "":
        return ""
    if not _CAPACITY.match(t):
        raise ValueError("not a number of items or a percentage (200 or 20%)")
    if t.endswith("%") and float(t[:-1]) > 100:
        raise ValueError("a share above 100%")
    return t


def validate(view: View) -> tuple[View, tuple[str, ...]]:
    """Fix combinations that cannot hold together (independent of any data).

    An upper threshold at or below the lower one is dropped.
    """
    notes: list[str] = []
    if view.lo is not None and view.hi is not None and band_upper(view.lo, view.hi) is None:
        view = replace(view, hi=None)
        notes.append("link setting 'hi' ignored: the upper threshold must be above the lower one")
    return view, tuple(notes)


def clamp_thresholds(view: View, lo_bound: float, hi_bound: float) -> View:
    """Thresholds moved inside ``[lo_bound, hi_bound]`` (the data's scale or [0, 1])."""
    def c(x: float | None) -> float | None:
        return None if x is None else min(max(x, lo_bound), hi_bound)

    v = replace(view, lo=c(view.lo), hi=c(view.hi))
    return validate(v)[0]


def with_changes(view: View, **changes: object) -> View:
    """A new view with some settings changed, the combination validated."""
    return validate(replace(view, **changes))[0]
