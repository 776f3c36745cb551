"""Which recalibration map is best for a dataset: the choice the Recalibration page shows
before a person picks one.

Contract
--------
:func:`best_method` takes honest fits (:class:`~calib.maps.fitting.FitResult`, one per
method, all scored the same way on data the map did not see) and returns the method whose
map has the lowest Brier score on the evaluation data, or ``None`` when no map beats the
stated confidence there (then the advice is to keep the confidence as it is).
:func:`held_out_scoring` is the scoring such a comparison uses: a person's choice, except
in-sample scoring, which flatters the most flexible map (isotonic and histogram binning
fit the noise of the data they are scored on), replaced by the odd/even split.

The Brier score is the criterion because it is a strictly proper score that weighs both
calibration and ranking (Gneiting & Raftery 2007); a map that is useless
(:attr:`FitResult.useless`: no better than the base rate, or an unusable fit) never wins.
Ties keep the order of :data:`calib.settings.METHODS` (the simpler, parametric maps first).
"""

from __future__ import annotations

from collections.abc import Mapping

from calib.maps.fitting import FitResult
from calib.settings import METHODS

#: The scoring that replaces in-sample scoring when maps are compared.
HELD_OUT = "oddeven"


def held_out_scoring(scoring: str) -> str:
    """The scoring used to compare maps: ``scoring`` unless it is in-sample (then
    :data:`HELD_OUT`)."""
    return HELD_OUT if scoring == "insample" else scoring


def best_method(fits: Mapping[str, FitResult]) -> str | None:
    """The method whose map scores the lowest Brier on held-out data, if it beats the
    stated confidence there.

    Parameters
    ----------
    fits:
        Method -> its fit, every fit scored on data it was not fitted on (not
        ``insample``: :func:`held_out_scoring`).

    Returns
    -------
    str or None
        The best method; ``None`` when no fit is usable or none has a lower Brier score
        than the stated confidence on the same evaluation data.

    Raises
    ------
    ValueError
        A fit scored in-sample (its score would flatter flexible maps), or fits scored
        differently (their scores are not comparable).
    """
    if any(f.scoring == "insample" for f in fits.values()):
        raise ValueError("maps compared in-sample: score them on held-out data (held_out_scoring)")
    if len({f.scoring for f in fits.values()}) > 1:
        raise ValueError("maps scored differently cannot be compared")
    order = {m: i for i, m in enumerate(METHODS)}
    best: tuple[float, int, str] | None = None
    for method, f in fits.items():
        after, before = f.after.brier.value, f.before.brier.value
        if f.useless or after is None or before is None or after >= before:
            continue
        key = (after, order.get(method, len(order)), method)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]
