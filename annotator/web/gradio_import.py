"""`import gradio` for the server, without Gradio rewriting its own type stubs.

Gradio 6's ComponentMeta calls `component_meta.create_or_modify_pyi` for every component
class it defines: it parses the class's source file with `ast` and rewrites the `.pyi`
stub beside it in site-packages, at every import. That is ~40% of `import gradio`
(1.2 of 2.8 CPU seconds here), and a server has no use for stubs (the shipped ones stay).
A one-shot import hook replaces that function with a no-op as the module is loaded, before
any component class exists.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from curation.core.errors import require_extra

STUB_WRITER = "gradio.component_meta"


class _SkipStubWriting(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name != STUB_WRITER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        load = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            load(module)
            module.create_or_modify_pyi = lambda *args, **kwargs: None  # type: ignore[attr-defined]

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def import_gradio() -> ModuleType:
    """Gradio (or the one-line error naming the `annotator` extra), stub writing skipped."""
    if "gradio" in sys.modules:
        return sys.modules["gradio"]
    finder = _SkipStubWriting()
    sys.meta_path.insert(0, finder)
    try:
        return require_extra("gradio", "annotator")
    finally:
        sys.meta_path.remove(finder)
