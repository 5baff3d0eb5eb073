"""pytest plugin of the mutation gate: scripts imported under the names mutmut gave them.

mutmut names a mutant after its file's path (``docs/generators/trust_block.py`` gives
``docs.generators.trust_block.x_render__mutmut_1``), and its trampoline switches a mutant on
only in a function whose ``__module__`` is that name. The tests import the scripts as scripts
run them: ``trust_block`` with its folder on ``sys.path``, or from their file under a name of
their own (``benchmark_capacity``). This plugin (``-p mutation.names``, in ``[tool.mutmut]
pytest_add_cli_args``) executes every module loaded from ``benchmarks/`` or
``docs/generators/`` under its mutmut name, so its functions carry that ``__module__``; the
module keeps its own name after.
"""

from __future__ import annotations

import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SCRIPT_FOLDERS = {
    ROOT / "benchmarks": "benchmarks",
    ROOT / "docs" / "generators": "docs.generators",
}
"""Folders of scripts in the gate, each with the dotted prefix of its mutants' names."""
_exec_module = SourceFileLoader.exec_module


def exec_module(loader: SourceFileLoader, module: ModuleType) -> None:
    """Execute ``module`` as ``<prefix>.<stem>`` when it is a script of a gated folder."""
    path = Path(loader.path).resolve()
    name = module.__name__
    prefix = SCRIPT_FOLDERS.get(path.parent)
    if prefix is None or name.startswith(f"{prefix}."):
        _exec_module(loader, module)
        return
    code = loader.get_code(name)
    module.__name__ = f"{prefix}.{path.stem}"
    sys.modules.setdefault(module.__name__, module)  # dataclasses look their module up by name
    try:
        exec(code, module.__dict__)  # what the loader does, under the other name
    finally:
        module.__name__ = name


SourceFileLoader.exec_module = exec_module  # type: ignore[method-assign]
