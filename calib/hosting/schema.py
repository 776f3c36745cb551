"""The share store's catalog schema and its versioned migrations, one text for both
databases (:mod:`calib.hosting.database`: SQLite, the embedded default, and PostgreSQL).

Each version is the DDL that brings a catalog of version ``v`` to ``v + 1``; a new catalog
(version 0) runs them all. The few types the two databases spell differently are named
by a placeholder (:data:`TYPES`): ``{blob}`` (SQLite ``BLOB``, PostgreSQL ``BYTEA``),
``{real}`` (``REAL`` / ``DOUBLE PRECISION``), ``{bigint}`` (``INTEGER``: SQLite's
integers are 64-bit / ``BIGINT``) and ``{serial}`` (an auto-incremented primary key that
never reuses a value). Everything else is standard SQL both accept.

Versions
--------
1. blobs, datasets, shares (calib before reviewing).
2. reviewing inside a share (issue 12): ``reviewing`` and the append-only ``labels``.
3. state shared by replicas (issue 27): ``login_failures``, the password lock-out's
   failures (:class:`calib.hosting.lockout.CatalogFailures`), so that a client landing on
   another replica finds its failures there.
4. the review workflow (issue 25): a label's ``unsure``, whether the judge was shown
   (``judge_shown``) and its reason tags; the owner's workflow setting on ``reviewing``
   (assignment, overlap share and labels per overlapped item, reviewer list, "show the
   judge", guidelines, reason tags, the card's field overrides); the append-only ``adjudications`` and the
   ``assignments`` the server hands out (:mod:`calib.hosting.assignment`).

The version is SQLite's ``PRAGMA user_version`` and PostgreSQL's one-row table
``calib_schema``; migrations run in the opening transaction (both databases' DDL is
transactional), so a crash leaves the old version whole.
"""

from __future__ import annotations

SCHEMA_VERSION = 4

_V1 = """
CREATE TABLE IF NOT EXISTS blobs (
    hash TEXT PRIMARY KEY,
    size {bigint} NOT NULL,
    created {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS datasets (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS dataset_blobs (
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    blob_hash TEXT NOT NULL REFERENCES blobs(hash),
    PRIMARY KEY (dataset_id, position)
);
CREATE INDEX IF NOT EXISTS dataset_blobs_blob ON dataset_blobs(blob_hash);
CREATE TABLE IF NOT EXISTS shares (
    id TEXT PRIMARY KEY,
    token_hash {blob} NOT NULL UNIQUE,
    owner_hash {blob} NOT NULL,
    owner_user TEXT,
    view TEXT NOT NULL,
    created {real} NOT NULL,
    expires {real},
    revoked {real}
);
CREATE INDEX IF NOT EXISTS shares_owner_user ON shares(owner_user);
CREATE TABLE IF NOT EXISTS share_datasets (
    share_id TEXT NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    dataset_id TEXT NOT NULL REFERENCES datasets(id),
    PRIMARY KEY (share_id, position)
);
CREATE INDEX IF NOT EXISTS share_datasets_dataset ON share_datasets(dataset_id);
"""
# Labels are append-only: no statement of calib updates or deletes a row except through
# its share's deletion (the cascade).
_V2 = """
CREATE TABLE IF NOT EXISTS reviewing (
    share_id TEXT PRIMARY KEY REFERENCES shares(id) ON DELETE CASCADE,
    enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    sample_size INTEGER NOT NULL,
    seed {bigint} NOT NULL,
    changed {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS labels (
    id {serial},
    share_id TEXT NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
    dataset TEXT NOT NULL,
    item TEXT NOT NULL,
    correct INTEGER NOT NULL CHECK (correct IN (0, 1)),
    note TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    time TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('queue', 'audit'))
);
CREATE INDEX IF NOT EXISTS labels_share_item ON labels(share_id, dataset, item, reviewer, id);
"""
# ``at`` is Unix time (every replica's clock): one row per wrong password, pruned when it
# leaves the lock-out window.
_V3 = """
CREATE TABLE IF NOT EXISTS login_failures (
    id {serial},
    client TEXT NOT NULL,
    at {real} NOT NULL
);
CREATE INDEX IF NOT EXISTS login_failures_client ON login_failures(client, at);
CREATE INDEX IF NOT EXISTS login_failures_at ON login_failures(at);
"""

# Columns added with a default, so that every row of version 3 reads as before (a label
# not unsure, given blind, without reasons; reviewing without assignment). Adjudications
# are append-only like labels; an assignment row is one reviewer's hold on, or skip of, one
# item (``at`` Unix time: a hold older than the timeout is free again).
_V4 = """
ALTER TABLE labels ADD COLUMN unsure INTEGER NOT NULL DEFAULT 0 CHECK (unsure IN (0, 1));
ALTER TABLE labels ADD COLUMN judge_shown INTEGER NOT NULL DEFAULT 0 CHECK (judge_shown IN (0, 1));
ALTER TABLE labels ADD COLUMN reasons TEXT NOT NULL DEFAULT '';
ALTER TABLE reviewing ADD COLUMN assign INTEGER NOT NULL DEFAULT 0 CHECK (assign IN (0, 1));
ALTER TABLE reviewing ADD COLUMN overlap {real} NOT NULL DEFAULT 0;
ALTER TABLE reviewing ADD COLUMN overlap_k INTEGER NOT NULL DEFAULT 2;
ALTER TABLE reviewing ADD COLUMN reviewers TEXT NOT NULL DEFAULT '';
ALTER TABLE reviewing ADD COLUMN show_judge INTEGER NOT NULL DEFAULT 0 CHECK (show_judge IN (0, 1));
ALTER TABLE reviewing ADD COLUMN guidelines TEXT NOT NULL DEFAULT '';
ALTER TABLE reviewing ADD COLUMN reason_tags TEXT NOT NULL DEFAULT '';
ALTER TABLE reviewing ADD COLUMN card_fields TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS adjudications (
    id {serial},
    share_id TEXT NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
    dataset TEXT NOT NULL,
    item TEXT NOT NULL,
    correct INTEGER NOT NULL CHECK (correct IN (0, 1)),
    note TEXT NOT NULL,
    adjudicator TEXT NOT NULL,
    time TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS adjudications_share_item ON adjudications(share_id, dataset, item, id);
CREATE TABLE IF NOT EXISTS assignments (
    share_id TEXT NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
    dataset TEXT NOT NULL,
    item TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('held', 'skipped')),
    at {real} NOT NULL,
    PRIMARY KEY (share_id, dataset, item, reviewer)
);
"""

#: The DDL that brings version ``v`` to ``v + 1``.
MIGRATIONS: dict[int, str] = {0: _V1, 1: _V2, 2: _V3, 3: _V4}

#: The tables of each version, in an order that respects foreign keys (parents first):
#: what ``calib hosting migrate`` copies.
TABLES: tuple[str, ...] = (
    "blobs", "datasets", "dataset_blobs", "shares", "share_datasets", "reviewing", "labels", "login_failures",
    "adjudications", "assignments",
)

#: How each database spells the placeholders of the DDL.
TYPES: dict[str, dict[str, str]] = {
    "sqlite": {"blob": "BLOB", "real": "REAL", "bigint": "INTEGER",
               "serial": "INTEGER PRIMARY KEY AUTOINCREMENT"},
    "postgresql": {"blob": "BYTEA", "real": "DOUBLE PRECISION", "bigint": "BIGINT",
                   "serial": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
}


def statements(version: int, dialect: str) -> list[str]:
    """The statements of the migration from ``version`` to ``version + 1`` in ``dialect``."""
    text = MIGRATIONS[version].format(**TYPES[dialect])
    return [s.strip() for s in text.split(";") if s.strip()]
