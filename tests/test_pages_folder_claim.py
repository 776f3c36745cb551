"""`claim_pages_folder` leans on a private Streamlit attribute; this fails loudly when
an upgrade changes what it leans on (docs/ARCHITECTURE.md, dashboard/navigation.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager

from dashboard.navigation import claim_pages_folder

UPGRADE = (
    "Streamlit changed how it detects a pages/ folder (PagesManager.uses_pages_directory); "
    "revisit dashboard.navigation.claim_pages_folder and tests/e2e/test_navigation.py"
)


@pytest.fixture
def app_with_pages(tmp_path: Path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "a.py").write_text("")
    (tmp_path / "app.py").write_text("")
    before = PagesManager.uses_pages_directory
    PagesManager.uses_pages_directory = None
    yield tmp_path / "app.py"
    PagesManager.uses_pages_directory = before


def test_streamlit_still_marks_an_app_with_a_pages_folder_as_version_1(app_with_pages: Path) -> None:
    assert "uses_pages_directory" in vars(PagesManager), UPGRADE
    PagesManager(str(app_with_pages))
    assert PagesManager.uses_pages_directory is True, UPGRADE


def test_the_claim_keeps_the_flag_off_for_managers_made_after_it(app_with_pages: Path) -> None:
    claim_pages_folder()
    PagesManager(str(app_with_pages))
    assert PagesManager.uses_pages_directory is False, UPGRADE
