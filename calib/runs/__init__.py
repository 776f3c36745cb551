"""The use-case layer: one function per thing a user asks for, each taking the loaded
data and one :class:`~calib.runs.settings.Settings` and returning one result that every
face reads.

The faces (the CLI, the dashboard, the notebook API, the reports) call these functions and
:mod:`calib.present`, never the engine's modules below them (``tools/check_architecture.py``
enforces it). Each module imports its part of the engine, and nothing here is imported at
``import calib.runs``: the CLI's start and the dashboard's first paint stay light.

- :mod:`~calib.runs.audit`: the audit of one dataset, several models compared, the
  judges compared at the target.
- :mod:`~calib.runs.labels`: reviewers' labels read, the audit on them, the reviewers'
  agreement.
- :mod:`~calib.runs.route`: routing at a threshold (the basis, the figures, the sweep, the
  lowest threshold meeting a target), the review queue.
- :mod:`~calib.runs.decide`: the threshold decision (recommendation, costs, per group),
  two thresholds, route stability, the cheapest chain of judges, the decisions written back.
- :mod:`~calib.runs.maps`: fit and score a recalibration map, read, write and apply one.
- :mod:`~calib.runs.drift`: drift between two runs, a series of runs.
- :mod:`~calib.runs.traffic`: label as you go: traffic read, plan, estimate, certify, budget;
  the plan as the Review page's items and its bound label by label.
- :mod:`~calib.runs.review`: the Review page: a click's label, an adjudication, the
  disagreements, the final labels, the card's fields, the labels so far.
- :mod:`~calib.runs.axis`: where a threshold can sit, for the widgets (numpy only).
- :mod:`~calib.runs.settings`: the :class:`Settings` value (level, reps, seed, binning, map
  and its scoring, thresholds, target, confidence, costs, capacity, procedure, groups);
  ``Settings.only(...)`` is the part of the settings a result reads (the dashboard's cache
  key). Each module re-exports the result types a face annotates with.
"""

from calib.runs.settings import Settings

__all__ = ["Settings"]
