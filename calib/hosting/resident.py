"""Process-wide hosting state that no client message can reset.

The password lock-out's counters, the memory ledger, the heavy-work gate and the share
store must live as long as the server process, one of each shared by every session.
``st.cache_resource`` is not the place: any WebSocket client empties it. Streamlit's
"Clear cache" menu item sends a ``clear_cache`` BackMsg, which the server honours for any
client, before any page code runs and whatever the page decides about access
(``AppSession._handle_clear_cache_request`` calls ``caching.cache_resource.clear()``,
Streamlit 1.67). Kept there, one message gave a fresh password gate (299 guesses in 27 s
were measured from one address against a limit of 5), a fresh memory ledger (every other
session's bookings forgotten: the 100 MB cap then admitted two more large uploads) and a
fresh heavy-work semaphore.

So they are kept here, in this module's memory: each made once, under a lock, on first
use (:func:`resident`); a maker that raises leaves nothing behind (the next call tries
again, so a fixed setting takes effect on reload). Only :func:`reset` drops them, and only
tests call it. No Streamlit import: nothing a client sends reaches this module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")

# re-entrant: a maker may itself ask for another resident value
_LOCK = threading.RLock()
_VALUES: dict[str, object] = {}


def resident(key: str, make: Callable[[], T]) -> T:
    """The value stored under ``key`` in this process, made by ``make()`` the first time
    (under a lock, so two sessions starting at once get the same object)."""
    with _LOCK:
        if key not in _VALUES:
            _VALUES[key] = make()
        return cast(T, _VALUES[key])


def reset() -> None:
    """Forget every resident value (tests only: a fresh server's state between tests)."""
    with _LOCK:
        _VALUES.clear()
