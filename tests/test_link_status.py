"""``Store.link_status``: whether a link still opens, asked at every page run of a session
that opened it (dashboard.sharing.end_if_link_gone), so revoking a link ends the tabs that
have it open. It must agree with ``open_share`` on every cause and read no file: the
statuses here are what the catalog's rows say, set by the store's own actions and a clock."""

from __future__ import annotations

import shutil
from pathlib import Path

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from tests.conftest import Clock  # the `clock` and `store` fixtures: tests/conftest.py

DAY = 86400.0
CSV = b"value,n,correct\n10,5,1\n50,10,5\n90,20,18\n"


def share(store: Store) -> tuple[str, str]:
    r = store.share([DatasetSpec.from_upload("judge", "judge.csv", CSV)], {"v": 1})
    return r.token, r.owner_secret


def test_the_status_follows_revoke_delete_and_expiry_as_open_share_does(store: Store, clock: Clock) -> None:
    live, _ = share(store)
    revoked, secret = share(store)
    deleted, secret2 = share(store)
    assert store.revoke(revoked, owner_secret=secret).ok
    assert store.delete(deleted, owner_secret=secret2).ok
    want = {live: "ok", revoked: "revoked", deleted: "unknown", "A" * 32: "unknown", "../etc": "malformed",
            "": "malformed", None: "malformed"}
    for token, status in want.items():
        assert store.link_status(token) == status, token
        assert store.open_share(token).status == status, token
    clock.t += 8 * DAY  # past the 7-day retention
    assert store.link_status(live) == "expired" == store.open_share(live).status


def test_the_status_reads_no_file(store: Store, tmp_path: Path) -> None:
    token, _ = share(store)
    shutil.rmtree(tmp_path / "data" / "blobs")  # the files are gone: opening fails, the row still says live
    assert store.open_share(token).status == "damaged"
    assert store.link_status(token) == "ok"


def test_a_malformed_token_touches_no_database(store: Store, tmp_path: Path) -> None:
    shutil.rmtree(tmp_path / "data")
    assert store.link_status("../../catalog") == "malformed"
