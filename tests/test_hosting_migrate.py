"""``calib hosting migrate --from DATA_DIR --to postgresql://…`` (issue 27): an SQLite data
directory holding shares, revoked links, review settings and labels, copied into a real
PostgreSQL in one command; then a store on PostgreSQL over the same data directory
serves exactly what the SQLite one served.

The reference is the SQLite catalog itself, read with sqlite3 before the copy, compared
row for row with what psycopg reads from PostgreSQL after it; and the behaviour of the
links (open, revoked, the owner's secret, the labels' history) asked through both stores.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from calib.hosting.schema import TABLES
from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from tests.cli_run import run
from tests.pgtest import fresh_database
from tests.test_labels_store import OTHER, PLAN, PLANS, lab, make_share, plan_of


@pytest.fixture()
def url() -> Iterator[str]:
    yield from fresh_database()


def _rows(con, table: str) -> list[tuple]:  # noqa: ANN001
    cols = {
        "labels": "id, share_id, dataset, item, correct, note, reviewer, time, kind",
        "shares": "id, token_hash, owner_hash, owner_user, view, created, expires, revoked",
    }.get(table, "*")
    return sorted(tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                  for r in con.execute(f"SELECT {cols} FROM {table}").fetchall())


@pytest.fixture()
def populated(tmp_path: Path):
    """A data directory with a live share with labels (one changed), a revoked share with
    labels (kept for its owner), a revoked share without (swept) and a logged-in owner's share."""
    data_dir = tmp_path / "data"
    s = Store.open(data_dir)
    live = make_share(s)
    assert s.add_label(live.token, lab(PLAN.queue[0].item, True, note="first"), PLANS).ok
    assert s.add_label(live.token, lab(PLAN.queue[0].item, False, note="changed"), PLANS).ok
    assert s.add_label(live.token, lab(PLAN.audit[0].item, reviewer="bob", kind="audit"), PLANS).ok
    revoked = make_share(s, OTHER)
    other_plans = {"judge": plan_of(OTHER)}
    assert s.add_label(revoked.token, lab(other_plans["judge"].queue[0].item, reviewer="cy"), other_plans).ok
    assert s.revoke(revoked.token, owner_secret=revoked.owner_secret).ok
    gone = make_share(s, enable=False)
    assert s.revoke(gone.token, owner_secret=gone.owner_secret).ok
    owned = s.share([DatasetSpec.from_upload("mine", "m.jsonl", OTHER)], {"v": 9}, owner_user="ann@example.com")
    return data_dir, {"live": live, "revoked": revoked, "gone": gone, "owned": owned}


def test_one_command_copies_shares_revoked_links_and_labels(populated, url: str, capsys) -> None:
    data_dir, links = populated
    before = Store.open(data_dir)  # the tidy a start does: the revoked share without labels is swept
    with sqlite3.connect(data_dir / "catalog.sqlite3") as con:
        expected = {t: _rows(con, t) for t in TABLES}
    assert len(expected["shares"]) == 3 and len(expected["labels"]) == 4

    code, out, err = run(["hosting", "migrate", "--from", data_dir, "--to", url], capsys)
    assert code == 0, err
    assert "3 share link(s), 1 of them revoked" in out and "4 label(s)" in out

    with psycopg.connect(url) as con:
        for table in TABLES:
            assert _rows(con, table) == expected[table], table
    after = Store.open(data_dir, database_url=url)
    for name in ("live", "revoked", "gone", "owned"):
        assert after.link_status(links[name].token) == before.link_status(links[name].token), name
    assert after.link_status(links["revoked"].token) == "revoked"
    assert after.open_share(links["live"].token).share.datasets[0].files[0].data == \
        before.open_share(links["live"].token).share.datasets[0].files[0].data
    assert after.labels(links["live"].token).labels == before.labels(links["live"].token).labels
    assert [x.note for x in after.labels(links["live"].token).labels][:2] == ["first", "changed"]
    r = links["revoked"]
    assert after.labels(r.token, owner_secret=r.owner_secret).labels == \
        before.labels(r.token, owner_secret=r.owner_secret).labels
    assert [x.share_id for x in after.list_owned("ann@example.com")] == [links["owned"].share_id]
    # the next label is appended after the copied ones (the id sequence moved past them)
    assert after.add_label(links["live"].token, lab(PLAN.queue[1].item, reviewer="dee"), PLANS).ok
    assert [x.reviewer for x in after.labels(links["live"].token).labels][-1] == "dee"
    # the owner's secret still works on the new catalog
    assert after.delete(links["live"].token, owner_secret=links["live"].owner_secret).ok


def test_a_target_that_already_holds_a_catalog_is_refused_and_left_alone(populated, url: str, capsys) -> None:
    data_dir, _ = populated
    assert run(["hosting", "migrate", "--from", data_dir, "--to", url], capsys)[0] == 0
    code, _, err = run(["hosting", "migrate", "--from", data_dir, "--to", url], capsys)
    assert code == 2 and "already holds a calib catalog (3 share(s), 4 label(s)); migrate into an empty database" in err
    with psycopg.connect(url) as con:
        assert con.execute("SELECT COUNT(*) FROM labels").fetchone() == (4,)


def test_bad_arguments_get_a_clear_message(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CALIB_DATABASE_URL", raising=False)
    Store.open(tmp_path / "data")
    code, _, err = run(["hosting", "migrate", "--from", tmp_path / "data"], capsys)
    assert code == 2 and "needs --to postgresql://" in err
    code, _, err = run(["hosting", "migrate", "--from", tmp_path / "data", "--to", "mysql://u:pw@h/db"], capsys)
    assert code == 2 and "CALIB_DATABASE_URL must be a postgresql://" in err
    code, _, err = run(["hosting", "migrate", "--from", tmp_path / "nothing", "--to", "postgresql://x@h/db"], capsys)
    assert code == 2 and "no catalog.sqlite3 here" in err
    code, _, err = run(["hosting", "migrate", "--from", tmp_path / "data",
                        "--to", "postgresql://calib:s3cret@127.0.0.1:1/db"], capsys)
    assert code == 2 and "nothing was copied" in err and "s3cret" not in err and "Traceback" not in err
