"""The examples in the public API's docstrings run, and each module listed has some.

The expected outputs in those examples are worked by hand in the docstring's own words
(a weighted mean, a Clopper-Pearson bound in closed form), so a doctest is a small
test against an independent computation, and the docs cannot drift from the code.
"""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

#: Modules whose docstrings carry examples; each must have at least one.
MODULES = (
    "calib.estimates",
    "calib.isotonic",
    "calib.solvers",
    "calib.table",
    "calib.thresholds",
    "calib.metrics.binned",
    "calib.present.notebook",
    "calib.present.routing_table",
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    with np.printoptions(legacy=False):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name} lists no example"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see the output above)"
