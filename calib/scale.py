"""The stated scale: which range a model's confidence numbers live on.

A judge asked for "0 to 100" states integers on that scale; the analysis keeps the
raw stated value (the values the model actually used) and maps it to a probability
with the affine rule ``p = (v - lo) / (hi - lo)``.

Reading a file's values (:func:`read_scale`, used by the stated-confidence and Inspect
readers): each value by its written form ("85%" on 0-100, a probability written as one
on 0-1), bare numbers on the scale that holds the bulk of them (:func:`detect_scale`),
values in two ranges (0.85 next to 85) refused with counts or, when asked, read by
range; values within floating-point noise of an end on it (:func:`onto_ends`). Options
that contradict the data are said, not applied silently: :func:`rescale_warnings` and
:func:`threshold_check`, which the command line and the dashboard both call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calib.errors import CalibError

#: Scales tried by :func:`detect_scale`, smallest first.
KNOWN_SCALES: tuple[tuple[str, float, float], ...] = (
    ("0-1", 0.0, 1.0),
    ("1-5", 1.0, 5.0),
    ("1-10", 1.0, 10.0),
    ("0-10", 0.0, 10.0),
    ("0-100", 0.0, 100.0),
)


@dataclass(frozen=True)
class Scale:
    """An affine stated scale ``[lo, hi]`` mapped onto probabilities ``[0, 1]``.

    Attributes
    ----------
    lo, hi:
        Ends of the stated scale; ``lo`` maps to probability 0 and ``hi`` to 1.
    name:
        ``"0-1"``, ``"0-100"``, ``"1-10"``, ``"1-5"``, ``"percent"`` (strings like
        ``"85%"``, on 0-100) or ``"LO-HI"`` for a user-given range.
    how:
        Why this scale was chosen, in words (shown in the load report).
    labels:
        For confidence in words (:mod:`calib.verbal`): the phrase of each rank ``1..k``
        on the scale ``[1/2, k + 1/2]``, lowest first; empty for a numeric scale.
    """

    lo: float
    hi: float
    name: str
    how: str = ""
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (np.isfinite(self.lo) and np.isfinite(self.hi)) or self.hi <= self.lo:
            raise CalibError(f"scale [{self.lo}, {self.hi}] is not a valid range: need LO < HI")

    def to_prob(self, stated: np.ndarray | float) -> np.ndarray:
        """Map stated values to probabilities: ``(v - lo) / (hi - lo)``."""
        return (np.asarray(stated, dtype=np.float64) - self.lo) / (self.hi - self.lo)

    def to_stated(self, prob: np.ndarray | float) -> np.ndarray:
        """Inverse of :meth:`to_prob`."""
        return self.lo + np.asarray(prob, dtype=np.float64) * (self.hi - self.lo)

    def contains(self, stated: np.ndarray) -> np.ndarray:
        """Boolean mask: which values lie inside ``[lo, hi]``."""
        v = np.asarray(stated, dtype=np.float64)
        return (v >= self.lo) & (v <= self.hi)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"lo": self.lo, "hi": self.hi, "name": self.name, "how": self.how}
        if self.labels:
            out["labels"] = list(self.labels)
        return out

    def show(self, stated: float) -> str:
        """A stated value for people and files: its phrase on a scale of phrases, else the number."""
        if self.labels:
            r = float(stated)
            if r.is_integer() and 1 <= r <= len(self.labels):
                return self.labels[int(r) - 1]
        return f"{float(stated):g}"


PROBABILITY = Scale(0.0, 1.0, "0-1", "probabilities")

#: The continuity correction's constant ``c`` in ``(s - lo + c) / (hi - lo + 2c)``.
CORRECTION = 0.5


# ---------------------------------------------------------------- finite probabilities
def scale_steps(scale: Scale, probs: np.ndarray | None = None) -> float:
    """``m``, the number of steps the continuity correction counts a scale in.

    A scale spanning 2 or more (0-100, 1-10, 1-5) has ``hi - lo`` steps of one. A
    probability scale (0-1) has the steps its values are written in: ``m = 10^d``
    with ``d`` the fewest decimals, from 2 to :data:`SNAP_DIGITS` (12), that write
    every value of ``probs`` (probabilities on the scale): a judge stating 0.95 gets
    ``m = 100``, as one stating 95 on 0-100; 0.955 gives 1,000; continuous softmax
    probabilities give ``10^12``, the grid :func:`snap` keeps, so the correction moves
    them by less than 1e-12 and only the exact ends are pulled in (to
    ``0.5 / (10^12 + 1)`` from 0 and 1). Without ``probs``: 100 (hundredths).
    """
    span = scale.hi - scale.lo
    if span >= 2:
        return float(span)
    if probs is None:
        return 100.0
    p = np.asarray(probs, dtype=np.float64).reshape(-1)
    p = p[np.isfinite(p)]
    for d in range(2, SNAP_DIGITS):
        s = p * 10.0**d
        # a value written with d decimals is within 10^d ulp of an integer here (< 2e-5 for d <= 11)
        if np.all(np.abs(s - np.rint(s)) <= 1e-4):
            return 10.0**d
    return 10.0**SNAP_DIGITS


def finite_from_prob(
    p: np.ndarray | float, scale: Scale, *, c: float = CORRECTION, steps: float | None = None,
) -> np.ndarray:
    """Continuity-corrected probability for probabilities ``p = (s - lo) / (hi - lo)``.

    .. math:: f = \\frac{m p + c}{m + 2c}

    with ``m = steps``, by default :func:`scale_steps` of ``scale`` (give the ``m``
    of the fitting data, ``scale_steps(scale, probs)``, on a 0-1 scale); ``p`` is
    clipped to [0, 1] first. See :func:`finite_prob`, which takes stated values.
    """
    if not c > 0:
        raise CalibError(f"the continuity correction constant must be positive, got {c:g}")
    m = scale_steps(scale) if steps is None else float(steps)
    return (np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0) * m + c) / (m + 2 * c)


def finite_prob(
    stated: np.ndarray | float, scale: Scale, *, c: float = CORRECTION, steps: float | None = None,
) -> np.ndarray:
    """Continuity-corrected probability of stated values, strictly inside (0, 1).

    .. math:: f(s) = \\frac{u + c}{m + 2c}, \\quad u = m \\frac{s - lo}{hi - lo}

    the add-one-half rule of Haldane (1956) and Anscombe (1956) for ``u`` successes
    out of ``m`` steps, with ``m`` = :func:`scale_steps`: ``hi - lo`` on 0-100, 1-10
    and 1-5, so that on 0-100 with ``c = 1/2`` it is ``(s - lo + 1/2) / (hi - lo + 1)
    = (s + 1/2) / 101`` and a stated 100 gets ``logit(f) = ln 201 = 5.30`` instead of
    infinity; on 0-1 the resolution of the values (``steps``; hundredths by default).
    It is for fitting maps on logits only (:mod:`calib.maps`); the calibration tests
    read every probability as stated (:mod:`calib.metrics`).

    Parameters
    ----------
    stated:
        Stated values on ``scale``.
    scale:
        The stated scale.
    c:
        The constant (> 0).
    steps:
        ``m``; default :func:`scale_steps` of ``scale``.
    """
    return finite_from_prob(scale.to_prob(stated), scale, c=c, steps=steps)


def parse_rescale(text: str) -> Scale:
    """Parse a ``--rescale LO,HI`` option such as ``"0,100"``."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2:
        raise CalibError(f"--rescale wants two numbers LO,HI (e.g. 0,100), got {text!r}")
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise CalibError(f"--rescale wants two numbers LO,HI (e.g. 0,100), got {text!r}") from None
    span = hi - lo  # Python floats: inf past the float range, no warning
    if not (math.isfinite(lo) and math.isfinite(hi)):  # "0,inf" is no range to map onto 0-1
        raise CalibError(f"--rescale {text}: LO, HI and HI - LO must be finite numbers")
    if not math.isfinite(span):
        raise CalibError(f"--rescale {text}: LO, HI and HI - LO must be finite numbers (HI - LO is {span:g})")
    return Scale(lo, hi, f"{parts[0]}-{parts[1]}", f"given: --rescale {parts[0]},{parts[1]}")


#: Share of the values that may lie outside the detected scale (reported as bad lines).
OUTSIDE_SHARE = 0.05
#: From this many values on, at least one value may lie outside the detected scale.
OUTSIDE_MIN_N = 10
#: Distance from a scale's end, relative to its span, within which a value is on that end:
#: ``1.0000000000000002`` is 1 on 0-1 (floating-point noise is about 1e-16 of the value).
END_TOLERANCE = 1e-9


def outside_allowed(n: int) -> int:
    """How many of ``n`` values may lie outside the detected scale: 5%, at least one
    from :data:`OUTSIDE_MIN_N` values on (1 of 10 to 39, 2 of 40 to 59, 5 of 100)."""
    return max(1, int(OUTSIDE_SHARE * n)) if n >= OUTSIDE_MIN_N else 0


def _outside_words(outside: int) -> str:
    """``1 value lies outside it and is dropped as a bad line`` (the number agreeing)."""
    if outside == 1:
        return "1 value lies outside it and is dropped as a bad line"
    return f"{outside:,} values lie outside it and are dropped as bad lines"


def _allowance_words(slack: int, n: int) -> str:
    """What :func:`outside_allowed` allows, for people: ``a scale is kept with up to 5% of
    the values outside it, here 2 of 51``."""
    return f"a scale is kept with up to {100 * OUTSIDE_SHARE:g}% of the values outside it, here {slack:,} of {n:,}"


def _tolerance(lo: float, hi: float) -> float:
    return END_TOLERANCE * (hi - lo)


def _inside(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    tol = _tolerance(lo, hi)
    return (v >= lo - tol) & (v <= hi + tol)


def onto_ends(values: np.ndarray, scale: Scale) -> tuple[np.ndarray, int]:
    """Values within floating-point noise of the scale's ends moved onto them.

    A value less than ``END_TOLERANCE * (hi - lo)`` beyond (or before) an end becomes
    that end: the top softmax probability ``1.0000000000000002`` is 1, ``-1e-17`` is 0.
    Returns the values and how many moved (the readers say so in a note). Values
    farther out are left as they are (and are outside the scale).
    """
    v = np.asarray(values, dtype=np.float64)
    tol = _tolerance(scale.lo, scale.hi)
    low = (v < scale.lo) & (v >= scale.lo - tol)
    high = (v > scale.hi) & (v <= scale.hi + tol)
    moved = int(low.sum() + high.sum())
    if not moved:
        return v, 0
    return np.where(low, scale.lo, np.where(high, scale.hi, v)), moved


def detect_scale(values: np.ndarray, *, percent_strings: bool = False) -> Scale:
    """Choose the smallest known scale that holds the bulk of the values.

    Rules, stated in :attr:`Scale.how` so the user sees what was assumed:

    - values written as percent strings ("85%") are on 0-100;
    - otherwise the first of 0-1, 1-5, 1-10, 0-10, 0-100 that holds all finite values
      but at most :func:`outside_allowed` of them (5%, at least one from 10 values on:
      one typo in 20 rows, two in 50, five in 100) wins. The values outside the chosen
      scale are then reported as bad lines ("outside the scale"), never clipped, so
      one typo ("850") neither blocks the other lines nor changes how they are read;
    - a value within ``END_TOLERANCE`` (1e-9) of a scale's span beyond one of its ends is
      on that end (``1.0000000000000002`` is 1 on 0-1; :func:`onto_ends` moves it there).

    Half points count: a judge asked for 1-5 that answers 3.5 is still on 1-5 (read
    as 0-100, 3.5 would mean 3.5%). A file whose values are all 0 or 1 is read as
    probabilities 0-1; integers 0-10 with some 0s as 0-10, not as 0-100. Small
    scales are ambiguous by nature (a 0-100 judge that only ever said 1 to 5 looks
    like 1-5), which is why the assumption is stated and ``--rescale`` overrides it.
    Values between 0 and 1 on 0-10 or 0-100 (0.85 next to 85) are not decided here:
    :func:`read_scale` flags them.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if percent_strings:
        return Scale(0.0, 100.0, "percent", 'values written as percentages ("85%"): 0-100')
    if v.size == 0:
        return Scale(0.0, 1.0, "0-1", "no values to detect from; assumed 0-1")
    slack = outside_allowed(v.size)
    for name, lo, hi in KNOWN_SCALES:
        inside = v[_inside(v, lo, hi)]
        outside = v.size - inside.size
        if outside > slack:
            continue
        extra = f"; {_outside_words(outside)}; {_allowance_words(slack, v.size)}" if outside else ""
        return Scale(
            lo, hi, name,
            f"values from {inside.min():g} to {inside.max():g}: assumed the {name} scale{extra}",
        )
    held = int(_inside(v, 0.0, 100.0).sum())
    raise CalibError(
        f"cannot tell the confidence scale: values run from {v.min():g} to {v.max():g}, and "
        f"{v.size - held:,} of {v.size:,} lie outside 0-100 (at most {slack:,} may); give the scale "
        "with --rescale LO,HI"
    )


# ---------------------------------------------------------------- reading values by form
#: Written forms of a confidence (codes of the ``forms`` array of :func:`read_scale`).
FORM_NUMBER, FORM_PERCENT, FORM_PROBABILITY = 0, 1, 2
#: Why a value of :func:`read_scale` is not used (codes of :attr:`ScaleReading.bad`).
OK, OUTSIDE, AMBIGUOUS = 0, 1, 2
PERCENT = Scale(0.0, 100.0, "percent", 'values written as percentages ("85%"): 0-100')


@dataclass(frozen=True)
class ScaleReading:
    """The stated values of a file, read on one scale.

    Attributes
    ----------
    scale:
        The scale every kept value is on.
    stated:
        The values on ``scale`` (a value of another written form converted: "85%" is
        0.85 on 0-1), ends snapped (:func:`onto_ends`).
    bad:
        Per value: :data:`OK`, :data:`OUTSIDE` (outside its form's scale) or
        :data:`AMBIGUOUS` (between 0 and 1 in a file on 0-10 or 0-100).
    group:
        Per value, the index in ``group_scales`` of the scale it was read on.
    group_scales:
        The scale of each form group (bare numbers, those read by range, percent, probability).
    forms:
        How many values of each written form: ``{"percent": 40, "0-100": 35, "probability": 25}``.
    notes, warnings:
        For the load report; warnings say an option contradicts the data.
    """

    scale: Scale
    stated: np.ndarray
    bad: np.ndarray
    group: np.ndarray
    group_scales: tuple[Scale, ...]
    forms: dict[str, int]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def why(self, i: int, value: float) -> str:
        """Why value ``i`` (``value`` as read) is bad: the end of a message that starts with
        the value ("confidence 0.85 lies between 0 and 1 ...")."""
        sc = self.group_scales[int(self.group[i])]
        if self.bad[i] == AMBIGUOUS:
            return (f"lies between 0 and 1 in a file on {sc.name}: a probability "
                    f"({100 * value:g}%) or {_num(value)} on {sc.name}? dropped, not guessed "
                    f"(--mixed-scales reads it as a probability, --rescale {sc.lo:g},{sc.hi:g} as "
                    f"{_num(value)} on {sc.name})")
        return f"is outside the {sc.name} scale [{sc.lo:g}, {sc.hi:g}]"


def _num(x: float) -> str:
    return f"{x:.12g}"


def _two_ranges_message(n_low: int, n_high: int, scale: Scale, low_ex: float, high_ex: float) -> str:
    return (
        f"the confidences sit in two ranges: {n_low:,} value(s) between 0 and 1 (e.g. {_num(low_ex)}) and "
        f"{n_high:,} above 1 on {scale.name} (e.g. {_num(high_ex)}), so {_num(low_ex)} could be a probability "
        f"({100 * low_ex:g}%) or {_num(low_ex)} on {scale.name}; calib does not guess. Say what was meant: "
        "--mixed-scales (on the dashboard: Scale \"mixed\") reads each value by its range (up to 1 a "
        f"probability, above 1 on {scale.name}), --rescale {scale.lo:g},{scale.hi:g} reads every value on {scale.name}, "
        "--rescale 0,1 reads every value as a probability (values above 1 are then dropped)"
    )


def _halves(r: np.ndarray) -> bool:
    """Whether every value of ``r`` is a multiple of 0.5: ``np.fmod(r, 0.5) == 0`` for all
    (NaN and infinities are not), as ``2 r`` being a whole number, two cheap passes
    where ``fmod`` cost 0.02 s a million. ``2 r`` overflows only beyond 8.9e307, where
    every double is a whole number: the overflow to infinity is read as such."""
    if np.isinf(r).any():
        return False
    with np.errstate(over="ignore"):
        t = r * 2.0
    return bool(np.array_equal(t, np.rint(t)))  # NaN equals nothing


def _off_the_bulk(v: np.ndarray, low: np.ndarray, rest: np.ndarray, scale: Scale) -> np.ndarray:
    """Of the values between 0 and 1 (``low``), those that do not belong with the rest.

    On a grid scale (every other value a multiple of 0.5, as a judge asked for 0-100 or
    0-10 states them) a value between 0 and 1 off that grid (0.85, not the half point
    0.5) does not belong. With continuous values, the values between 0 and 1 belong
    unless they are more than twice as many as those in the next stretch of the same
    length times ``span / 10``, ``[1, 1 + max(1, span / 10))``: a uniform 0-10 score has
    about as many in (0, 1) as in [1, 2), a file of probabilities among 0-100 values far more.
    """
    r = v[rest]
    if r.size and _halves(r):
        return low & (v != 0.5)  # the one multiple of 0.5 strictly between 0 and 1
    width = max(1.0, (scale.hi - scale.lo) / 10)
    near = int((rest & (v >= 1) & (v < 1 + width)).sum())
    return low if int(low.sum()) > 2 * near else np.zeros_like(low)


def read_scale(
    values: np.ndarray, forms: np.ndarray | None = None, *, given: Scale | None = None, mixed: bool = False,
) -> ScaleReading:
    """Read stated values on one scale, each by its written form.

    Rules (the readers' documentation points here):

    - ``"85%"`` (:data:`FORM_PERCENT`) is 85 on 0-100, and a probability written as such
      (:data:`FORM_PROBABILITY`: a decimal up to 1 in free text, ``"0.6"``) is on 0-1,
      whatever the other values are: the written form says it;
    - bare numbers (:data:`FORM_NUMBER`) are on ``given`` (``--rescale``) or on the
      scale :func:`detect_scale` finds for them (the bulk rule);
    - on a detected 0-10 or 0-100 scale, bare numbers strictly between 0 and 1 next to
      numbers above 1 (0.85 and 85) sit in two ranges: with ``mixed`` (``--mixed-scales``)
      each is read by its range (up to 1, 1 included, a probability; above 1 on the
      detected scale); else at most :func:`outside_allowed` of them are dropped as
      :data:`AMBIGUOUS` bad lines and more refuse the file with both counts and the fix,
      because reading 0.85 as 0.85% without a word turns a probability into nothing;
    - when several forms occur, the values are shown on the scale of the commonest
      form (the others converted through their probability), the forms counted in
      ``forms`` and a note; values within 1e-9 of the span beyond an end are on it.

    Raises
    ------
    CalibError
        The bare numbers fit no known scale, or sit in two ranges beyond the allowance.
    """
    v = np.asarray(values, dtype=np.float64)
    form = np.zeros(v.size, dtype=np.int8) if forms is None else np.asarray(forms, dtype=np.int8)
    num = form == FORM_NUMBER
    notes: list[str] = []
    warnings: list[str] = []
    bad = np.zeros(v.size, dtype=np.int8)
    if given is not None:
        num_scale = given
        warnings += rescale_warnings(v[num], given)
    else:
        num_scale = detect_scale(v[num])
    # a bare number up to 1 read as a probability (mixed), by value
    as_prob = np.zeros(v.size, dtype=bool)
    if given is None and num.any() and num_scale.lo <= 0 and num_scale.hi - num_scale.lo > 1:
        as_prob = _two_ranges(v, form, num_scale, mixed, bad, notes)
    groups = (
        (num & ~as_prob, num_scale, num_scale.name),
        (num & as_prob, PROBABILITY, "probability"),
        (form == FORM_PERCENT, PERCENT, "percent"),
        (form == FORM_PROBABILITY, PROBABILITY, "probability"),
    )
    group, present, counts, snapped, moved = _on_group_scales(v, groups, bad)
    # the scale shown: the commonest form's (bare numbers first on a tie)
    scale = max(present, key=lambda g: int(g[0].sum()))[1] if present else num_scale
    stated = snapped
    for mask, sc in present:
        if (sc.lo, sc.hi) != (scale.lo, scale.hi):  # converted through the probability
            stated = np.where(mask & (bad == OK), scale.to_stated(sc.to_prob(snapped)), stated)
    if len(counts) > 1:
        how = f"read by written form ({_forms_text(counts)}), shown on {scale.name}"
        if num.any() and not as_prob[num].all():
            how += f"; bare numbers: {num_scale.how}"
        scale = Scale(scale.lo, scale.hi, scale.name, how)
        notes.append(f"forms: {_forms_text(counts)}; every value shown on the {scale.name} scale")
    if moved:
        notes.append(f"{moved:,} value(s) within {END_TOLERANCE:g} of the span beyond an end of the scale "
                     "(floating-point noise, e.g. 1.0000000000000002) read as that end")
    return ScaleReading(scale, stated, bad, group, tuple(g[1] for g in groups), counts, tuple(notes),
                        tuple(warnings))


def _two_ranges(v: np.ndarray, form: np.ndarray, num_scale: Scale, mixed: bool, bad: np.ndarray,
                notes: list[str]) -> np.ndarray:
    """Bare numbers between 0 and 1 next to numbers above 1 on ``num_scale``: which are
    read as probabilities (``mixed``); else the few are marked :data:`AMBIGUOUS` in
    ``bad``, and more refuse the file (:class:`CalibError` with both counts and the fix)."""
    num = form == FORM_NUMBER
    as_prob = np.zeros(v.size, dtype=bool)
    low = num & (v > 0) & (v < 1)
    high = num & (v > 1 + _tolerance(0.0, 1.0))
    low = _off_the_bulk(v, low, num & ~low, num_scale)
    n_low, n_high = int(low.sum()), int(high.sum())
    if not (n_low and n_high):
        return as_prob
    if mixed:
        as_prob = num & (v >= 0) & (v <= 1 + _tolerance(0.0, 1.0))
        notes.append(f"--mixed-scales: {int(as_prob.sum()):,} bare numbers up to 1 read as probabilities, "
                     f"{n_high:,} above 1 on {num_scale.name}")
    elif n_low <= outside_allowed(int(num.sum())):
        bad[low] = AMBIGUOUS
    else:
        i_low, i_high = int(np.flatnonzero(low)[0]), int(np.flatnonzero(high)[0])
        n_pct = int((form == FORM_PERCENT).sum())
        also = f" ({n_pct:,} more written as percentages, read as such)" if n_pct else ""
        raise CalibError(_two_ranges_message(n_low, n_high, num_scale, v[i_low], v[i_high]) + also)
    return as_prob


def _on_group_scales(
    v: np.ndarray, groups: tuple[tuple[np.ndarray, Scale, str], ...], bad: np.ndarray,
) -> tuple[np.ndarray, list[tuple[np.ndarray, Scale]], dict[str, int], np.ndarray, int]:
    """Each form group's values snapped onto its scale's ends, those outside it marked
    :data:`OUTSIDE` in ``bad``; returns each value's group, the groups present (mask,
    scale), the count per form label, the snapped values and how many were snapped."""
    group = np.zeros(v.size, dtype=np.int8)
    counts: dict[str, int] = {}
    moved = 0
    present = []
    snapped = v.copy()
    for g, (mask, sc, label) in enumerate(groups):
        if not mask.any():
            continue
        present.append((mask, sc))
        group[mask] = g
        counts[label] = counts.get(label, 0) + int(mask.sum())
        snapped[mask], k = onto_ends(v[mask], sc)
        moved += k
        out = np.zeros(v.size, dtype=bool)
        out[mask] = ~sc.contains(snapped[mask])
        bad[out & (bad == OK)] = OUTSIDE
    return group, present, counts, snapped, moved


def _forms_text(counts: dict[str, int]) -> str:
    words = {"percent": 'written as percentages ("85%")', "probability": "probabilities (0-1)"}
    return ", ".join(f"{k:,} {words.get(name, f'on {name}')}" for name, k in counts.items())


# ---------------------------------------------------------------- options against the data
def rescale_warnings(values: np.ndarray, given: Scale) -> list[str]:
    """Warnings when a ``--rescale`` contradicts the values it is applied to.

    - more than :func:`outside_allowed` of the values lie outside the given scale
      (they are dropped): "412 of 1,000 values lie outside ... the data look like 0-100";
    - every value lies on a known scale at most half as wide inside the given one
      (``--rescale 0,100`` on values 1 to 9): "every value lies in 1-10: did you mean
      --rescale 1,10?".

    The rescale is still applied (it is the user's word); the warning goes to stderr,
    the JSON notes and the dashboard.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return []
    out: list[str] = []
    try:
        seen = detect_scale(v)
    except CalibError:
        seen = None
    flag = f"--rescale {given.lo:g},{given.hi:g}"
    outside = int((~_inside(v, given.lo, given.hi)).sum())
    if outside > outside_allowed(v.size):
        hint = f"; the values look like {seen.name} (--rescale {seen.lo:g},{seen.hi:g})" if seen else ""
        out.append(f"{flag}: {outside:,} of {v.size:,} values lie outside [{given.lo:g}, {given.hi:g}] and are "
                   f"dropped (values from {v.min():g} to {v.max():g}){hint}")
    elif (seen is not None and given.lo - _tolerance(given.lo, given.hi) <= seen.lo
          and seen.hi <= given.hi + _tolerance(given.lo, given.hi)
          and seen.hi - seen.lo <= 0.5 * (given.hi - given.lo) and outside == 0):
        out.append(f"{flag}: every value lies in {seen.name} (from {v.min():g} to {v.max():g}): did you mean "
                   f"--rescale {seen.lo:g},{seen.hi:g}? Read on [{given.lo:g}, {given.hi:g}], a "
                   f"{v.max():g} means {100 * float(given.to_prob(v.max())):.3g}%")
    return out


@dataclass(frozen=True)
class ThresholdCheck:
    """What a review threshold does to the data, when it contradicts them.

    ``message`` is ``None`` for a threshold inside the data; ``refuse`` is true when the
    threshold lies outside the scale entirely (the command line exits 2).
    """

    message: str | None
    refuse: bool = False


def threshold_check(values: np.ndarray, scale: Scale, threshold: float, *, flag: str = "--threshold") -> ThresholdCheck:
    """Check a review threshold on stated values against the scale and the data.

    Items below the threshold go to a person, at or above it are accepted unseen, so:

    - outside ``[lo, hi]`` entirely: refused, with the threshold read as a percentage on
      this scale as the likely meaning ("80 on a 1-10 scale: did you mean 8.2?");
    - above every stated value: every item goes to a person; at or below every
      stated value (and above ``lo``): every item is accepted unseen. Both warn.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    t = float(threshold)
    tol = _tolerance(scale.lo, scale.hi)
    if t > scale.hi + tol or t < scale.lo - tol:
        side = "above the top" if t > scale.hi else "below the bottom"
        what = "every item would go to a person" if t > scale.hi else "every item would be accepted unseen"
        hint = ""
        if 0 <= t <= 100 and scale.hi - scale.lo != 100:
            hint = (f"; if {t:g} was meant as {t:g}%, the same point on this scale is "
                    f"{float(scale.to_stated(t / 100)):.4g}")
        return ThresholdCheck(
            f"{flag} {t:g} lies {side} of the {scale.name} scale [{scale.lo:g}, {scale.hi:g}]: {what}{hint}",
            refuse=True,
        )
    if v.size and t > v.max():
        return ThresholdCheck(f"{flag} {t:g} is above every stated value (the highest is {v.max():g} on "
                              f"{scale.name}): every item goes to a person")
    if v.size and t <= v.min() and t > scale.lo:
        return ThresholdCheck(f"{flag} {t:g} is at or below every stated value (the lowest is {v.min():g} on "
                              f"{scale.name}): every item is accepted unseen")
    return ThresholdCheck(None)


#: Significant digits, relative to the scale's span, kept by :func:`snap`.
SNAP_DIGITS = 12


def snap(values: np.ndarray, scale: Scale) -> np.ndarray:
    """Stated values rounded to a decimal grid of about ``1e-12`` of the scale's span.

    The grid step is ``10 ** -d`` with ``d = SNAP_DIGITS - ceil(log10(hi - lo))``:
    1e-12 on 0-1, 1e-11 on 1-5, 1-10 and 0-10, 1e-10 on 0-100 (1e-12 to 1e-11 of
    the span). Why: one value reached by different floating-point paths (the top
    softmax probability of different logit vectors, a percentage divided back)
    differs in its last bits (``0.39999999999999997`` vs ``0.4000000000000001``)
    and would otherwise make two cells, two "distinct values" and, at a bin edge,
    two bins. Double-precision noise is about ``1e-16`` of the value, 10,000 times
    below the grid; real steps of a scale (0.4 vs 0.4001, 95 vs 95.5) are millions
    of grid steps apart and stay distinct.

    A value with at most ``d`` decimals (95, 0.95, 0.4001) is returned unchanged,
    bit for bit (``np.round`` multiplies by ``10**d``, rounds to an integer and
    divides back, which gives the double nearest that decimal); others move by at
    most half a step (1/3 becomes 0.333333333333 on 0-1). Noise that straddles the
    midpoint between two grid points (a true value within about 1e-16 of a
    midpoint, which no stated decimal is) can still split in two cells, as
    before. On a scale far from 0 (1000-1001) the grid is coarser than 1e-12 of the
    span so that ``v * 10**d`` stays an exact integer. ``-0.0`` becomes ``0.0``.
    """
    v = np.asarray(values, dtype=np.float64)
    span = float(scale.hi - scale.lo)
    size = max(abs(float(scale.lo)), abs(float(scale.hi)), span)
    # the second bound keeps v * 10**d below 1e15 < 2**53 (exact integers) on scales far from 0
    decimals = min(SNAP_DIGITS - math.ceil(math.log10(span)), 15 - math.ceil(math.log10(size)))
    return np.round(v, decimals) + 0.0
