"""tests/test_labels_store.py's tests of reviewing inside a share, run again with the catalog
on PostgreSQL (issue 27: the same tests on both databases; their SQLite run is in
tests/test_labels_store.py). Their independent read of the label rows (``rows_of``, plain sqlite3 there) reads
PostgreSQL here with psycopg. The tests that are about the SQLite file itself, or fork
writers on it, have their both-database form in tests/test_catalog.py (history and
scoping, a writer killed before its commit, concurrent writers, migrations).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import tests.test_labels_store as labels_tests
from calib.hosting.store import Store
from tests.pgtest import fresh_database
from tests.test_labels_store import (  # noqa: F401  (collected here with this module's `store`)
    Clock,
    test_a_bad_label_is_refused_with_its_reason_and_nothing_is_written,
    test_a_changed_label_keeps_its_history_and_current_is_the_latest,
    test_a_share_holds_at_most_the_cap,
    test_import_is_owner_only_keeps_times_and_names_each_refused_label,
    test_names_in_any_script_are_kept,
    test_reviewing_is_off_by_default_and_only_the_owner_turns_it_on,
    test_reviewing_off_again_stops_labels_but_the_owner_still_reads_them,
    test_the_reviewer_name_is_trimmed_and_a_single_dataset_is_stored_as_empty,
)


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """tests/test_labels_store.py's store, its catalog in a fresh PostgreSQL schema (and its
    ``rows_of`` reading that schema)."""
    import psycopg

    for url in fresh_database():

        def rows_of(data_dir: Path, url: str = url) -> list[tuple]:
            with psycopg.connect(url) as con:
                return con.execute(
                    "SELECT share_id, dataset, item, correct, note, reviewer, kind FROM labels ORDER BY id"
                ).fetchall()

        monkeypatch.setattr(labels_tests, "rows_of", rows_of)
        s = Store.open(tmp_path / "data", clock=Clock(), database_url=url)
        yield s
        s.db.close()  # type: ignore[attr-defined]
