"""A module bound now and loaded at its first attribute access, for the few costly imports.

numpy takes about 50 ms to import on two cores and starts its BLAS threads, a fifth of what
``remember`` or ``status`` may spend starting up (docs/startup.md), yet neither computes a
vector; recall, dream and index updates always do. A module that computes with numpy writes::

    if TYPE_CHECKING:
        import numpy as np
    else:
        np = lazy_module("numpy")

so mypy checks it against numpy's own types and the interpreter loads numpy when ``np.`` is
first read. The loading is the standard library's ``importlib.util.LazyLoader``: once loaded,
the module object is the ordinary module, and reading ``np.zeros`` costs what it always did.
Nothing at such a module's top level may read ``np.`` (a type alias written at top level goes
under ``TYPE_CHECKING`` too), or the first import pays after all; ``tests/cli/test_startup.py``
checks that ``remember`` and ``status`` never load numpy.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

_lock = threading.Lock()


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module object that imports itself when an attribute is first read.

    A module already imported is returned as it is. Python 3.11's lazy loader does not guard
    the first access against two threads. A command reads numpy from its main thread only (the
    lexical workers run SQL), and the MCP server, which may serve requests side by side,
    imports numpy before it serves, so the first access is never contended.
    """
    with _lock:
        module = sys.modules.get(name)
        if module is not None:
            return module
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        loader = importlib.util.LazyLoader(spec.loader)
        spec.loader = loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        loader.exec_module(module)
        return module


def lazy_exports(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], object]:
    """A package's ``__getattr__``: each name of ``homes`` loaded from its submodule at first use.

    ``homes`` maps an exported name to the submodule (relative to ``package``) that defines it;
    the loaded value is kept in ``namespace`` (the package's ``globals()``), so later reads are
    ordinary attribute reads. Any other name raises ``AttributeError``, which lets the import
    system go on to load a submodule of that name.
    """

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return __getattr__
