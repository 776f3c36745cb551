"""calib: a calibration audit for models that state how sure they are.

The Python API (README, "Python API")::

    import calib
    a = calib.audit(df, confidence="conf", outcome="correct", group="subject", cluster="item")
    print(a.verdict); a.to_frame(); a.per_value; a.figure().save("reliability.svg")
    d = calib.route(df, target=0.05, confidence_level=0.95, cost_review=1, cost_miss=20)
    m = calib.fit(df, "platt"); c = calib.compare({"a": df_a, "b": df_b})
    from calib import decision  # the threshold-decision engine itself

``calib.audit``, ``calib.fit``, ``calib.route`` (= ``calib.decide``), ``calib.compare``
and ``calib.load`` (and, on traffic without outcomes, ``calib.plan``, ``calib.estimate``,
``calib.certify``, ``calib.budget``: :mod:`calib.traffic`; on a labels file, ``calib.agreement``:
:mod:`calib.labels.reviewers`) are the functions of :mod:`calib.present.notebook` (inputs read by
:mod:`calib.api` as files are). They are looked up lazily (module ``__getattr__``), so
``import calib`` and ``python -m calib --help`` import no numpy, pandas or scipy.

Two of those names are also modules: :mod:`calib.audit` (``from calib.audit import
Audit``) and :mod:`calib.compare`. A package attribute cannot be both, and importing a
submodule sets the attribute to the module whatever was there, so those two modules
are made callable instead: when the import system sets ``calib.audit`` (or
``calib.compare``) to its module, the package's ``__setattr__`` gives the module a
class whose ``__call__`` is the API function. Hence, in any import order,
``calib.audit(df)`` audits a frame, ``calib.audit.Audit`` is the class,
``import calib.audit as m`` and ``from calib import audit`` give the (callable) module.

The notebook face is reached by name (:func:`importlib.import_module`): the package
namespace is its entry point, as ``__main__`` is the CLI's; no engine module imports it.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__version__ = "0.1.0"

#: Names of the Python API, all functions of :mod:`calib.present.notebook`.
API: tuple[str, ...] = ("audit", "fit", "route", "decide", "compare", "load", "plan", "estimate", "certify",
                         "agreement", "budget")
#: API names that are also submodules of the package (made callable, see above).
CALLABLE_MODULES: tuple[str, ...] = ("audit", "compare")
#: Submodules reached as attributes without an import statement.
LAZY_MODULES: tuple[str, ...] = ("decision", "api")
_FACE = "calib.present.notebook"


def _api(name: str) -> Any:
    import importlib

    return getattr(importlib.import_module(_FACE), name)


class _CallableModule(types.ModuleType):
    """A submodule whose name is also an API function: calling it calls the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _api(self.__name__.rpartition(".")[2])(*args, **kwargs)


class _Package(types.ModuleType):
    """The package's module type: keeps ``calib.audit``/``calib.compare`` callable."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in CALLABLE_MODULES and type(value) is types.ModuleType:
            value.__class__ = _CallableModule
        super().__setattr__(name, value)


def __getattr__(name: str) -> Any:
    import importlib

    if name in CALLABLE_MODULES or name in LAZY_MODULES:
        # importing sets the attribute (through _Package.__setattr__), so this runs once
        return importlib.import_module(f"{__name__}.{name}")
    if name in API:
        return _api(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(API) | set(LAZY_MODULES))


sys.modules[__name__].__class__ = _Package
