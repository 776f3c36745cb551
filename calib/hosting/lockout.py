"""The password lock-out's failures kept in the catalog, shared by every replica.

With one server process the failures live in its memory
(:class:`calib.hosting.access.MemoryFailures`). With several replicas behind a load
balancer that would give a guesser ``replicas x max_failures`` tries per window, and a
fresh count on each replica it lands on; so when the catalog is shared
(``CALIB_DATABASE_URL``) the failures live in its ``login_failures`` table (schema version
3, :mod:`calib.hosting.schema`) and each attempt is checked and counted in one of the
catalog's serialised write transactions (:mod:`calib.hosting.database`): two replicas
checking at once see each other's failures, none is lost.

Times are Unix time: the replicas' clocks must agree (NTP) to well under the window
(15 minutes by default). A row leaves the table once it is older than the window (pruned
by the next attempt), and when the right password is given (the client's rows).

What stays per replica, and why that is safe
--------------------------------------------
- **Owner secrets** have no attempt counter anywhere: a secret is 256 random bits
  (:data:`calib.hosting.shares.OWNER_SECRET_BYTES`), checked against its SHA-256, so
  guessing one is hopeless however many replicas take the guesses.
- **The memory ledger, the heavy-work gate and a session's budget**
  (:mod:`calib.hosting.budget`) measure the memory and CPU of the process they run in:
  each replica has its own and guards its own.
- **A reviewer's place in the review queue** is the page's session state; the labels
  themselves are in the catalog, so a reviewer who lands on another replica after a
  restart goes on from the labels already stored.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from calib.errors import CalibError
from calib.hosting.catalog import Catalog
from calib.hosting.database import Connection, is_database_error

log = logging.getLogger(__name__)

#: What the password form says when the shared counters cannot be read: the attempt is
#: refused unchecked (a lock-out that cannot be read is not skipped).
UNAVAILABLE_MESSAGE = "Sign-in is not available right now (the server's database did not answer). Try again in a moment."


class _Session:
    """The failures inside one catalog write transaction."""

    def __init__(self, con: Connection) -> None:
        self.con = con

    def latest(self, client: str | None, n: int) -> list[float]:
        if n <= 0:
            return []
        if client is None:
            rows = self.con.execute("SELECT at FROM login_failures ORDER BY at DESC, id DESC LIMIT ?", (n,))
        else:
            rows = self.con.execute(
                "SELECT at FROM login_failures WHERE client = ? ORDER BY at DESC, id DESC LIMIT ?", (client, n)
            )
        return sorted(float(r[0]) for r in rows.fetchall())

    def record(self, client: str, now: float) -> None:
        self.con.execute("INSERT INTO login_failures(client, at) VALUES (?, ?)", (client, float(now)))

    def forget(self, client: str) -> None:
        self.con.execute("DELETE FROM login_failures WHERE client = ?", (client,))


class CatalogFailures:
    """A :class:`calib.hosting.access.FailureLog` in ``catalog``'s ``login_failures`` table."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    @contextlib.contextmanager
    def session(self, cutoff: float) -> Iterator[_Session]:
        """One write transaction over the failures after ``cutoff`` (older ones deleted);
        a database that fails raises :class:`CalibError` (:data:`UNAVAILABLE_MESSAGE`)."""
        try:
            with self.catalog._transaction() as con:
                con.execute("DELETE FROM login_failures WHERE at <= ?", (float(cutoff),))
                yield _Session(con)
        except Exception as exc:
            if not (isinstance(exc, OSError) or is_database_error(exc)):
                raise
            log.exception("password lock-out: the catalog failed")
            raise CalibError(UNAVAILABLE_MESSAGE) from None
