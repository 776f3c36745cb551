"""What one server process lends its sessions: memory and heavy-work slots.

A hosted dashboard serves many people from one Python process (Streamlit runs every
browser session as a thread of the same process). Two of the layers of
:mod:`calib.limits` are bookings held while a session lives, not caps on one input:

6. **Memory per session and in total** — :class:`MemoryLedger` books the estimated
   in-memory size of every dataset a session holds (:func:`estimated_bytes`) and
   refuses a dataset that would push the session over its budget, or the server over
   its total, with a message that says what to do.
7. **Heavy work at once** — :class:`HeavyGate`, a process-wide semaphore around
   parsing and resampling, so that at most ``heavy_jobs`` of them run at the same time
   and the peak memory of parsing is bounded by ``heavy_jobs`` times one input.

Their sizes come from :class:`calib.limits.Limits` (``CALIB_SESSION_MEMORY_MB``,
``CALIB_TOTAL_MEMORY_MB``, ``CALIB_HEAVY_JOBS``, ``CALIB_HEAVY_WAIT_SECONDS``).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from calib.errors import CalibError
from calib.limits import MB, Limits


def estimated_bytes(obj: object, *, _seen: set[int] | None = None) -> int:
    """Estimated resident size of a loaded object (a :class:`~calib.dataset.Dataset`,
    its table and rows), in bytes.

    numpy arrays count their buffer (``nbytes``); arrays of Python objects (ids,
    question text) add the mean ``sys.getsizeof`` of up to 1,000 evenly spaced
    elements times their number; dataclasses, tuples, lists and dicts are walked.
    Shared objects are counted once. An estimate, meant for budgets, not accounting.
    """
    seen = set() if _seen is None else _seen
    if id(obj) in seen or obj is None:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        size = int(obj.nbytes)
        if obj.dtype == object and obj.size:
            flat = obj.ravel()
            step = max(1, flat.size // 1000)
            sample = flat[::step]
            size += int(sum(sys.getsizeof(x) for x in sample) / sample.size * flat.size)
        return size
    if isinstance(obj, (bytes, bytearray, str, int, float, bool)):
        return sys.getsizeof(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sys.getsizeof(obj) + sum(
            estimated_bytes(getattr(obj, f.name), _seen=seen) for f in dataclasses.fields(obj)
        )
    if isinstance(obj, (tuple, list, set, frozenset)):
        return sys.getsizeof(obj) + sum(estimated_bytes(x, _seen=seen) for x in obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(
            estimated_bytes(k, _seen=seen) + estimated_bytes(v, _seen=seen) for k, v in obj.items()
        )
    return sys.getsizeof(obj)


class MemoryLedger:
    """Book-keeping of the memory that sessions hold, with a per-session and a total budget.

    A session books each dataset it keeps (:meth:`SessionBudget.reserve`); a booking
    that would exceed the session's budget or the process total is refused with a
    :class:`CalibError`, and nothing is booked. Bookings are released explicitly
    (a file removed from the session) or when the session's :class:`SessionBudget`
    is garbage collected, which is what happens when Streamlit drops a closed
    session's state: the dashboard keeps the budget in ``st.session_state``.

    Thread-safe: Streamlit sessions are threads of one process.
    """

    def __init__(self, session_bytes: int, total_bytes: int) -> None:
        self.session_bytes = int(session_bytes)
        self.total_bytes = int(total_bytes)
        self._lock = threading.Lock()
        self._books: dict[int, dict[str, int]] = {}
        self._next = 0

    @classmethod
    def from_limits(cls, limits: Limits) -> MemoryLedger:
        return cls(limits.session_memory_mb * MB, limits.total_memory_mb * MB)

    def open_session(self) -> SessionBudget:
        """A new session's budget; its bookings are released when it is collected."""
        with self._lock:
            self._next += 1
            sid = self._next
            self._books[sid] = {}
        budget = SessionBudget(self, sid)
        # weakref.finalize holds no reference to the budget, so dropping the session
        # state frees the bookings without any Streamlit session-end hook.
        weakref.finalize(budget, self._drop, sid)
        return budget

    def used(self, session: int | None = None) -> int:
        """Bytes booked by one session (its id) or by all."""
        with self._lock:
            if session is not None:
                return sum(self._books.get(session, {}).values())
            return sum(sum(b.values()) for b in self._books.values())

    def _reserve(self, sid: int, key: str, nbytes: int, what: str) -> None:
        nbytes = max(0, int(nbytes))
        with self._lock:
            book = self._books.setdefault(sid, {})
            mine = sum(v for k, v in book.items() if k != key) + nbytes
            everyone = sum(sum(b.values()) for b in self._books.values()) - book.get(key, 0) + nbytes
            if self.session_bytes and mine > self.session_bytes:
                raise CalibError(
                    f"{what}: needs about {nbytes / MB:,.0f} MB in memory and this session would then hold "
                    f"{mine / MB:,.0f} MB, over its budget of {self.session_bytes / MB:,.0f} MB; "
                    "remove a file from this session, or upload a count table instead of rows"
                )
            if self.total_bytes and everyone > self.total_bytes:
                raise CalibError(
                    f"{what}: the server is holding too much data for its other users right now "
                    f"({everyone / MB:,.0f} MB would exceed {self.total_bytes / MB:,.0f} MB); "
                    "try again later or upload a count table instead of rows"
                )
            book[key] = nbytes

    def _release(self, sid: int, key: str | None) -> None:
        with self._lock:
            book = self._books.get(sid)
            if book is None:
                return
            if key is None:
                book.clear()
            else:
                book.pop(key, None)

    def _drop(self, sid: int) -> None:
        with self._lock:
            self._books.pop(sid, None)


class SessionBudget:
    """One session's handle on a :class:`MemoryLedger` (keep it in the session state)."""

    def __init__(self, ledger: MemoryLedger, sid: int) -> None:
        self._ledger = ledger
        self.id = sid

    def reserve(self, key: str, nbytes: int, what: str) -> None:
        """Book ``nbytes`` under ``key`` (replacing an earlier booking of the same key),
        or raise :class:`CalibError` naming ``what`` when a budget would be exceeded."""
        self._ledger._reserve(self.id, key, nbytes, what)

    def release(self, key: str | None = None) -> None:
        """Release one booking (or all of this session's bookings)."""
        self._ledger._release(self.id, key)

    @property
    def used(self) -> int:
        return self._ledger.used(self.id)


# ------------------------------------------------------------------ heavy work
class HeavyGate:
    """A process-wide limit on heavy computations running at once.

    ``with gate.slot("bootstrap of judge.jsonl"): ...`` waits up to ``wait_s`` seconds
    for one of ``slots`` places and raises :class:`CalibError` ("the server is busy")
    when none frees up, so a burst of sessions queues instead of running N parses in
    parallel and multiplying the peak memory by N.
    """

    def __init__(self, slots: int, wait_s: float) -> None:
        if slots < 1:
            raise CalibError(f"heavy-work slots must be at least 1, got {slots}")
        self.slots = int(slots)
        self.wait_s = float(wait_s)
        self._sem = threading.BoundedSemaphore(self.slots)

    @classmethod
    def from_limits(cls, limits: Limits) -> HeavyGate:
        return cls(limits.heavy_jobs, limits.heavy_wait_s)

    @contextmanager
    def slot(self, what: str) -> Iterator[None]:
        if not self._sem.acquire(timeout=self.wait_s):
            raise CalibError(
                f"{what}: the server is busy with other people's computations "
                f"(waited {self.wait_s:g} s for one of {self.slots} slots); try again in a moment"
            )
        try:
            yield
        finally:
            self._sem.release()
