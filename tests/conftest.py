"""Fixtures that several test files share (the browser tests have their own, tests/e2e/conftest.py).

Only what is identical across files lives here; a file that needs a variant (another clock's
start, other environment variables) keeps its own fixture of the same name, which wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.hosting.store import Store


class Clock:
    """A settable Unix clock for the store: tests move ``t`` to cross an expiry."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Store:
    """A fresh share store in ``tmp_path/data``, links kept 7 days, on the test's ``clock``."""
    return Store.open(tmp_path / "data", retention_days=7, clock=clock)


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    """Empty process-wide caches (runtime, store) before and after the test; a dashboard test
    file applies it to all its tests with ``pytestmark = pytest.mark.usefixtures("fresh_caches")``."""
    from tests.apptest import clear_caches

    clear_caches()
    yield
    clear_caches()
