"""What a page gets from :func:`dashboard.page.page_setup`: who is looking
(:class:`Access`) and what is loaded and shown (:class:`Context`). Plain values."""

from __future__ import annotations

from dataclasses import dataclass

from calib.dataset import Dataset
from calib.hosting.view import View


@dataclass(frozen=True)
class Access:
    """Who is looking and what they may do.

    Filled in by :func:`dashboard.auth.access`: a shared password, an OIDC login, and
    read-only share links. Locally everything is allowed.
    """

    allowed: bool = True
    read_only: bool = False
    user: str | None = None


@dataclass(frozen=True)
class Context:
    """What a page gets from :func:`dashboard.page.page_setup`."""

    page: str
    view: View
    access: Access
    datasets: tuple[Dataset, ...]
    colors: dict[str, str]

    @property
    def focus(self) -> Dataset | None:
        """The dataset the single-model views show (the one named by ``view.model``)."""
        for d in self.datasets:
            if d.name == self.view.model:
                return d
        return self.datasets[0] if self.datasets else None

    def by_name(self, name: str) -> Dataset | None:
        return next((d for d in self.datasets if d.name == name), None)
