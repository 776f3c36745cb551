"""Row-level judgments: what a reader returns before reduction to a count table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calib.scale import Scale


@dataclass(frozen=True)
class OptionScores:
    """Per-option scores of multiple-choice items (top-label confidence comes from them).

    Attributes
    ----------
    logits:
        ``(N, K)`` float64 log-probabilities (or logits) per option after any length
        normalisation; items with fewer than K options are padded with ``-inf``.
    gold:
        ``(N,)`` int64 index of the correct option.
    letters:
        Option labels for the K columns (``("A", "B", "C", "D")``).
    normalisation:
        ``"none"``, ``"char"``, ``"byte"`` or ``"token"`` — what the logits were divided by.
    """

    logits: np.ndarray
    gold: np.ndarray
    letters: tuple[str, ...]
    normalisation: str = "none"

    @property
    def pred(self) -> np.ndarray:
        """Predicted option: the argmax (first on ties, as numpy does)."""
        return np.argmax(self.logits, axis=1)


@dataclass(frozen=True)
class Judgments:
    """One judged item per row, all arrays of equal length N.

    Attributes
    ----------
    stated:
        The raw confidence as stated (on :attr:`scale`); for option scores the top
        softmax probability.
    prob:
        ``scale.to_prob(stated)``, in [0, 1].
    correct:
        Outcome, bool.
    line:
        1-based line number (or sample position) in the source, for messages and
        the review queue.
    item_id:
        Item id as text (``""`` when the file has none).
    group:
        Group label per row (subject, task, model) or ``None``.
    scale:
        The stated scale.
    options:
        Per-option scores when the confidence came from log-probs, else ``None``.
    text:
        Optional short text per row (question, prediction) for the review queue;
        shown only through escaping elements.
    cluster:
        Cluster label per row (the item an Inspect epoch or a repeated id belongs to,
        or ``--cluster-key``), or ``None`` when rows are independent. Intervals then
        resample whole clusters (:mod:`calib.clusters`).
    cluster_how:
        How the clusters were found, in words (``"Inspect epochs: sample id"``), for
        :attr:`calib.clusters.Clusters.how`; ``""`` without clusters.
    """

    stated: np.ndarray
    prob: np.ndarray
    correct: np.ndarray
    line: np.ndarray
    item_id: np.ndarray
    scale: Scale
    group: np.ndarray | None = None
    options: OptionScores | None = None
    text: np.ndarray | None = None
    cluster: np.ndarray | None = None
    cluster_how: str = ""

    def __len__(self) -> int:
        return int(self.stated.shape[0])

    def take(self, mask: np.ndarray) -> Judgments:
        """Rows where ``mask`` (bool or index array) selects."""
        opt = self.options
        if opt is not None:
            opt = OptionScores(opt.logits[mask], opt.gold[mask], opt.letters, opt.normalisation)
        return Judgments(
            stated=self.stated[mask],
            prob=self.prob[mask],
            correct=self.correct[mask],
            line=self.line[mask],
            item_id=self.item_id[mask],
            scale=self.scale,
            group=None if self.group is None else self.group[mask],
            options=opt,
            text=None if self.text is None else self.text[mask],
            cluster=None if self.cluster is None else self.cluster[mask],
            cluster_how=self.cluster_how,
        )
