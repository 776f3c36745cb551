"""One frozen, hashable value for every setting a run reads.

A face builds one :class:`Settings` from what its user chose (the CLI from its flags,
the dashboard from its :class:`~calib.hosting.view.View`, the notebook from keyword
arguments) and hands it, with the loaded data, to a function of :mod:`calib.runs`. The
engine's functions keep their keyword arguments; the runs layer unpacks this value into
them in one place, so a face never passes ``reps``, ``seed`` and ``level`` one by one, and
the dashboard caches a result by ``(data key, settings)``.

This module imports nothing heavy (the CLI builds its parser before any engine import).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from calib import settings as defaults


@dataclass(frozen=True)
class Settings:
    """What a run is asked with; every field has the engine's default.

    Attributes
    ----------
    level, reps, seed:
        Confidence level of every interval, bootstrap resamples, random seed (``None``, for
        a traffic plan's draw only: fresh randomness).
    scheme, bins:
        Binning of the calibration errors (:data:`calib.settings.SCHEME_CHOICES`) and the
        number of bins of ``width`` and ``mass``.
    below:
        The audit's "share stated below V" (``None``: 80 on 0-100).
    method, scoring, folds:
        Recalibration map (``"none"`` or one of :data:`calib.settings.METHODS`), how it is
        scored (:data:`calib.settings.SCORINGS`; ``None``: the engine's choice, see
        :func:`calib.maps.fit`) and the folds of ``kfold``.
    hist_scheme, hist_bins:
        Binning of the histogram map, when ``method`` is ``"histogram"``.
    on, lo, hi:
        What the review threshold is set on (:data:`calib.settings.THRESHOLD_ON`), the review
        threshold and the optional upper one (``None``: not set).
    target, confidence:
        Target error rate among the items accepted unseen (``None``: the engine's default,
        :data:`calib.settings.DEFAULT_TARGET`) and the guarantee's confidence.
    cost_review, cost_miss, cost_right:
        Cost of a review, of an error accepted unseen, of reviewing an item that was right
        (``None``: not given; ``cost_right`` ``None`` means the same as ``cost_review``).
    capacity:
        Reviewers' capacity as typed: ``"200"`` items or ``"20%"`` (``""``: none).
    procedure:
        Testing procedure of the threshold certificate (:data:`calib.settings.PROCEDURES`).
    by_group, simultaneous:
        A threshold per group; with simultaneous confidence over the groups.
    """

    level: float = defaults.LEVEL
    reps: int = defaults.REPS
    seed: int | None = 0
    scheme: str = "auto"
    bins: int = defaults.BINS
    below: float | None = None
    method: str = "none"
    scoring: str | None = None
    folds: int = 5
    hist_scheme: str = "mass"
    hist_bins: int = defaults.BINS
    on: str = "stated"
    lo: float | None = None
    hi: float | None = None
    target: float | None = None
    confidence: float = defaults.DEFAULT_CONFIDENCE
    cost_review: float | None = None
    cost_miss: float | None = None
    cost_right: float | None = None
    capacity: str = ""
    procedure: str = defaults.FIXED_SEQUENCE
    by_group: bool = False
    simultaneous: bool = False

    @property
    def target_error(self) -> float:
        """The target error rate: the one asked, else :data:`calib.settings.DEFAULT_TARGET`."""
        return defaults.DEFAULT_TARGET if self.target is None else self.target

    @property
    def ece_scheme(self) -> str:
        """The binning of every ECE: the diagram's CORP curve (a diagram, no binning) reads
        its ECE on ``auto``; any other scheme is the engine's to accept or refuse."""
        return "auto" if self.scheme == "corp" else self.scheme

    def only(self, *names: str) -> Settings:
        """These settings with every field but ``names`` at its default: the part a result
        depends on, so a cache keyed by it is not missed when another setting moves."""
        unknown = set(names) - {f.name for f in fields(self)}
        if unknown:
            raise ValueError(f"no setting {sorted(unknown)[0]!r}")
        return replace(Settings(), **{n: getattr(self, n) for n in names})

    @property
    def stats(self) -> dict[str, object]:
        """``reps``, ``seed`` and ``level`` as the engine's keyword arguments."""
        return {"reps": self.reps, "seed": self.seed, "level": self.level}
