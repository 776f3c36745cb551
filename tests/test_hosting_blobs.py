"""Blobs in a directory every replica mounts (issue 27, item 2: ``CALIB_BLOB_DIR``), with
the catalog on a real PostgreSQL: two replicas, each with a data directory of its own,
one shared blob directory.

Checked with the file system (``os.stat``, ``hashlib``), not through the store: the file's
name is its SHA-256, its mode 0600 in 0700 folders, and it leaves with its last share.
"""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from tests.pgtest import fresh_database
from tests.test_labels_store import DATA, PLAN, PLANS, lab, make_share


@pytest.fixture()
def url() -> Iterator[str]:
    yield from fresh_database()


def test_a_share_made_on_one_replica_opens_on_the_other(tmp_path: Path, url: str) -> None:
    shared = tmp_path / "shared-blobs"
    a = Store.open(tmp_path / "a", database_url=url, blob_dir=shared)
    r = make_share(a)
    b = Store.open(tmp_path / "b", database_url=url, blob_dir=shared)  # its start tidies: keeps a's share
    got = b.open_share(r.token)
    assert got.available and got.share.datasets[0].files[0].data == DATA
    assert b.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
    assert [x.reviewer for x in a.labels(r.token).labels] == ["ann"]
    digest = hashlib.sha256(DATA).hexdigest()
    blob = shared / digest[:2] / digest
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == digest
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600
    assert {stat.S_IMODE(p.stat().st_mode) for p in (shared, blob.parent)} == {0o700}
    assert not (tmp_path / "a" / "blobs" / digest[:2]).exists()  # nothing in the data directories
    # deleted on one replica: the file leaves the shared directory
    assert b.delete(r.token, owner_secret=r.owner_secret).ok
    assert not blob.exists()


def test_without_a_shared_blob_directory_the_other_replica_drops_the_share(tmp_path: Path, url: str) -> None:
    """Why the setting exists: a replica that cannot see the file treats the share as damaged."""
    r = make_share(Store.open(tmp_path / "a", database_url=url))
    b = Store.open(tmp_path / "b", database_url=url)
    assert b.link_status(r.token) == "unknown"


def test_the_shared_directory_keeps_the_upload_cap_and_comes_from_the_environment(
    tmp_path: Path, url: str
) -> None:
    s = Store.from_env({"CALIB_DATA_DIR": str(tmp_path / "d"), "CALIB_DATABASE_URL": url,
                        "CALIB_BLOB_DIR": str(tmp_path / "mnt" / "blobs"), "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "1"})
    assert s.blob_dir == (tmp_path / "mnt" / "blobs").resolve()
    with pytest.raises(CalibError, match="is more than this server stores"):
        s.share([DatasetSpec.from_upload("big", "big.jsonl", b"x" * (2 * 1024 * 1024))])
    assert list(s.blob_dir.rglob("*")) == []
