"""What the AppTest suites (tests/test_app.py, tests/test_hosting_ui.py) share: the
entry script, a run that must raise nothing, an upload through the real widget, and
emptying Streamlit's process-wide caches between tests."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from calib.hosting import resident

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 60


def app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT)


def ok(at: AppTest) -> AppTest:
    """The run raised nothing (an exception element is a traceback shown to the user)."""
    assert not at.exception, [e.value for e in at.exception]
    return at


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader[0].set_value((name, data, "application/octet-stream"))
    return ok(at.run())


def clear_caches() -> None:
    """st.cache_data / cache_resource and the hosting state (:mod:`calib.hosting.resident`)
    are shared by every AppTest in the process."""
    st.cache_data.clear()
    st.cache_resource.clear()
    resident.reset()
