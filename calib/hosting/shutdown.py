"""Graceful shutdown: a catalog write under way when the server is told to stop finishes.

On SIGTERM (or SIGINT, SIGQUIT) Streamlit stops its server (``streamlit.web.bootstrap``:
the handler calls ``Server.stop``): it stops accepting connections, closes the sessions'
WebSockets and its event loop ends, so the main thread returns and Python shuts down.
The page scripts run in *daemon* threads (Streamlit 1.67's ``ScriptRunner``): Python does
not wait for them, it freezes them where they stand once the ``atexit`` handlers have
run. A label write in such a thread would then be cut before its ``COMMIT``, and the
database would drop it (all or nothing: the reviewer is never told "Saved", and the
label is not stored).

So every catalog write transaction is counted (:meth:`WriteTracker.writing`, around
:meth:`calib.hosting.catalog.Catalog._transaction`), and an ``atexit`` handler
(:meth:`WriteTracker.drain`) waits up to :data:`DRAIN_SECONDS` for the writes under way
to commit, and refuses new ones from then on (:data:`SHUTTING_DOWN_MESSAGE`: the reviewer
clicks again once the browser reconnects, to another replica or to this one restarted).
A SIGKILL gives no such chance: a write cut then is rolled back by the database, never
half-stored. The readiness probe (:mod:`calib.hosting.webguard`, ``/_calib/ready``) says
503 once draining has begun.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Iterator

from calib.errors import CalibError

#: The longest a stopping server waits for its catalog writes under way (a write takes
#: milliseconds; a database lock waits at most :data:`calib.hosting.database.LOCK_TIMEOUT_S`).
DRAIN_SECONDS = 20.0

SHUTTING_DOWN_MESSAGE = "This server is restarting; nothing was saved. Try again in a moment."


class WriteTracker:
    """Counts the catalog writes under way, so that a shutdown can wait for them."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._under_way = 0
        self.draining = False

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Around one write transaction; refused (:class:`CalibError`) once draining."""
        with self._cond:
            if self.draining:
                raise CalibError(SHUTTING_DOWN_MESSAGE)
            self._under_way += 1
        try:
            yield
        finally:
            with self._cond:
                self._under_way -= 1
                self._cond.notify_all()

    @property
    def under_way(self) -> int:
        with self._cond:
            return self._under_way

    def drain(self, timeout: float = DRAIN_SECONDS) -> bool:
        """Refuse new writes and wait for those under way; True when none is left."""
        with self._cond:
            self.draining = True
            return self._cond.wait_for(lambda: self._under_way == 0, timeout)


#: The process's writes (one tracker: every store of the process counts here).
WRITES = WriteTracker()
atexit.register(WRITES.drain)
