"""Multiple-choice option scores: top-label judgments and the class-wise (per letter) view.

A model scored on a multiple-choice benchmark does not state a confidence; it has
one. For item ``i`` with option scores ``s_i1 .. s_iK`` (log-probabilities of each
option's continuation, possibly length-normalised), the harness of Hendrycks et al.
(2021) predicts ``argmax_k s_ik`` and the calibration literature (Guo et al. 2017,
"On Calibration of Modern Neural Networks") takes as confidence the top softmax
probability

.. math:: \\hat p_i = \\max_k \\frac{e^{s_{ik}}}{\\sum_j e^{s_{ij}}}.

That *top-label* confidence is a probability in ``[1/K, 1]`` and feeds the whole
engine unchanged. The *class-wise* view (Kull et al. 2019, "Beyond temperature
scaling") asks the same question per option letter: a model that answers "A" far
more often than "A" is right shows letter bias, which top-label calibration hides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from calib.errors import CalibError
from calib.rows import Judgments, OptionScores
from calib.scale import Scale

if TYPE_CHECKING:
    import pandas as pd

#: The scale of top-label confidences: probabilities.
TOP_LABEL_SCALE = Scale(0.0, 1.0, "0-1", "top softmax probability over the options")

#: Most options one item (one row) may have, and most distinct option labels one input
#: may name: multiple-choice benchmarks have 2 to a few dozen; a row of 10,000 is refused
#: by its line rather than padded into a table of every row times 10,000 columns.
MAX_OPTIONS = 1000
#: The load report's reason for an item over :data:`MAX_OPTIONS`.
R_TOO_MANY_OPTIONS = "too many options"


def too_many_options(field: str, n: int) -> str:
    """Why an item of ``n`` options (in ``field``) is dropped: every row is padded to the
    widest (:func:`pad_rows`), so one wide item would widen them all."""
    return f"{field!r} has {n:,} options, over the {MAX_OPTIONS:,} one item may have"


def option_letters(k: int) -> tuple[str, ...]:
    """Labels for ``k`` option columns: ``A, B, C...`` up to 26, else ``1..k``."""
    return tuple(option_label(i, k) for i in range(k))


def option_label(j: int, k: int) -> str:
    """The label of column ``j`` of ``k`` (:func:`option_letters` without building them all)."""
    return chr(ord("A") + j) if k <= 26 else str(j + 1)


def pad_rows(rows: list[np.ndarray], k: int | None = None) -> np.ndarray:
    """Stack rows of unequal length into ``(N, K)``, padding with ``-inf``.

    ``-inf`` is a log-probability of zero: a padded option can never be the argmax
    and adds nothing to the softmax denominator.
    """
    width = max((r.shape[0] for r in rows), default=0) if k is None else k
    out = np.full((len(rows), width), -np.inf, dtype=np.float64)
    for i, r in enumerate(rows):
        out[i, : r.shape[0]] = r
    return out


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax ``exp(s_k - max s) / sum_j exp(s_j - max s)``.

    Subtracting the row maximum keeps every exponent ``<= 0``, so nothing overflows
    however large the scores; ``-inf`` entries become exact zeros.
    """
    z = np.asarray(logits, dtype=np.float64)
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def top_probability(logits: np.ndarray) -> np.ndarray:
    """Top softmax probability per row, ``1 / sum_j exp(s_j - max s)``.

    Written this way the top entry contributes exactly ``exp(0) = 1``, so the result
    is never below ``1/K`` by rounding (the notebook's uniform-floor check).
    """
    z = np.asarray(logits, dtype=np.float64)
    z = z - np.max(z, axis=-1, keepdims=True)
    return 1.0 / np.exp(z).sum(axis=-1)


def length_normalise(scores: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Divide each option's log-probability by its length: ``s_k / len_k``.

    This is lm-evaluation-harness' ``acc_norm`` rule (``lls / completion_len``,
    ``completion_len`` = characters of the choice text without the leading target
    delimiter) when ``lengths`` are character counts; byte or token counts give its
    ``acc_bytes`` or a per-token mean. Padded options (``-inf``) stay ``-inf``.
    """
    s = np.asarray(scores, dtype=np.float64)
    n = np.asarray(lengths, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isneginf(s), -np.inf, s / n)


def to_judgments(
    options: OptionScores,
    *,
    line: np.ndarray,
    item_id: np.ndarray,
    group: np.ndarray | None = None,
    text: np.ndarray | None = None,
    correct: np.ndarray | None = None,
) -> Judgments:
    """Top-label judgments from option scores.

    prediction ``argmax_k s_k`` (first on ties, as numpy and lm-eval do); confidence
    ``stated = prob = max_k softmax(s)_k`` on the 0-1 scale; correctness
    ``prediction == gold`` unless ``correct`` is given (items with several right
    options).
    """
    logits = np.asarray(options.logits, dtype=np.float64)
    if logits.ndim != 2 or logits.shape[0] != options.gold.shape[0]:
        raise CalibError("option scores must be an (N, K) array with one gold index per row")
    p = top_probability(logits) if logits.shape[0] else np.zeros(0)
    y = (np.argmax(logits, axis=1) == options.gold) if correct is None else np.asarray(correct, dtype=bool)
    return Judgments(
        stated=p,
        prob=p.copy(),
        correct=y,
        line=np.asarray(line, dtype=np.int64),
        item_id=np.asarray(item_id, dtype=str) if len(item_id) else np.zeros(0, dtype=str),
        scale=TOP_LABEL_SCALE,
        group=None if group is None else np.asarray(group, dtype=str),
        options=options,
        text=None if text is None else np.asarray(text, dtype=str),
    )


@dataclass(frozen=True)
class LetterBias:
    """Per option letter: how often it is predicted versus how often it is right.

    Attributes
    ----------
    letters:
        Option labels (one per column of the option scores).
    predicted, gold:
        Items whose prediction / gold answer is this letter.
    predicted_share, gold_share:
        The same as fractions of all items; their difference is the letter's bias.
    mean_confidence:
        Mean top-label confidence of the items predicted as this letter (NaN if none).
    accuracy:
        Fraction of the items predicted as this letter whose gold is this letter, i.e.
        the class-wise precision (NaN if none). Comparing it with ``mean_confidence``
        is the class-wise calibration check of Kull et al. (2019).
    """

    letters: tuple[str, ...]
    predicted: np.ndarray
    gold: np.ndarray
    predicted_share: np.ndarray
    gold_share: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd  # lazy: a table is built here only; a run imports calib.options

        return pd.DataFrame(
            {
                "letter": list(self.letters),
                "predicted": self.predicted,
                "gold": self.gold,
                "predicted_share": self.predicted_share,
                "gold_share": self.gold_share,
                "bias": self.predicted_share - self.gold_share,
                "mean_confidence": self.mean_confidence,
                "accuracy_when_predicted": self.accuracy,
            }
        )


def letter_bias(options: OptionScores) -> LetterBias:
    """Class-wise view of option scores (letter bias).

    For letter ``k``: ``predicted_k = #{i: argmax_i = k}``, ``gold_k = #{i: gold_i =
    k}``, ``mean_confidence_k = mean(max softmax_i | argmax_i = k)``,
    ``accuracy_k = #{i: argmax_i = k, gold_i = k} / predicted_k``.
    """
    logits = np.asarray(options.logits, dtype=np.float64)
    n, k = logits.shape
    pred = np.argmax(logits, axis=1) if n else np.zeros(0, dtype=np.int64)
    gold = np.asarray(options.gold, dtype=np.int64)
    conf = top_probability(logits) if n else np.zeros(0)
    n_pred = np.bincount(pred, minlength=k)[:k]
    n_gold = np.bincount(gold[(gold >= 0) & (gold < k)], minlength=k)[:k]
    conf_sum = np.bincount(pred, weights=conf, minlength=k)[:k]
    hit = np.bincount(pred[pred == gold], minlength=k)[:k]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(n_pred > 0, conf_sum / np.maximum(n_pred, 1), np.nan)
        acc = np.where(n_pred > 0, hit / np.maximum(n_pred, 1), np.nan)
    total = max(n, 1)
    letters = tuple(options.letters[:k]) if len(options.letters) >= k else option_letters(k)
    return LetterBias(
        letters=letters,
        predicted=n_pred.astype(np.int64),
        gold=n_gold.astype(np.int64),
        predicted_share=n_pred / total,
        gold_share=n_gold / total,
        mean_confidence=mean_conf,
        accuracy=acc,
    )
