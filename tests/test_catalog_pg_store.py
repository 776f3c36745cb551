"""tests/test_store.py's tests of the share store's behaviour, run again with the catalog on
PostgreSQL (issue 27: the same tests on both databases; their SQLite run is in
tests/test_store.py). Only the tests that go through the store's own API are here: those
that read the SQLite file itself (its bytes, its tables, its locking between processes)
are about that file, and tests/test_catalog.py covers the same contract on both.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.hosting.store import Store
from tests.conftest import Clock
from tests.pgtest import fresh_database
from tests.test_link_status import test_the_status_follows_revoke_delete_and_expiry_as_open_share_does  # noqa: F401
from tests.test_store import (  # noqa: F401  (collected here with this module's `store`)
    test_expiry_with_injected_clock,
    test_logged_in_owner_manages_without_secret,
    test_open_share_refuses_a_blob_altered_in_place,
    test_owner_revokes_and_viewer_cannot,
    test_owner_updates_view,
    test_reopen_applies_current_server_limits,
    test_round_trip_returns_same_bytes_options_view_and_dataset,
    test_threads_share_and_open_concurrently,
    test_tokens_are_long_random_and_distinct,
    test_view_copy_is_independent,
    test_viewer_cannot_delete_or_overwrite,
)


@pytest.fixture()
def store(tmp_path: Path, clock: Clock) -> Iterator[Store]:
    """tests/conftest.py's store, its catalog in a fresh PostgreSQL schema."""
    for url in fresh_database():
        s = Store.open(tmp_path / "data", retention_days=7, clock=clock, database_url=url)
        yield s
        s.db.close()  # type: ignore[attr-defined]
