"""pytest plugin of the mutation gate: benchmark scripts imported under the names mutmut gave them.

mutmut names a mutant after its file's path (``benchmarks/trust_block.py`` gives
``benchmarks.trust_block.x_render__mutmut_1``), and its trampoline switches a mutant on only in
a function whose ``__module__`` is that name. The tests import the scripts as scripts run them:
``trust_block`` from ``benchmarks/`` on ``sys.path``, or from their file under a name of their own
(``benchmark_capacity``). This plugin (``-p mutation.names``, in
``[tool.mutmut] pytest_add_cli_args``) executes every module loaded from ``benchmarks/`` under its
mutmut name, so its functions carry that ``__module__``; the module keeps its own name after.
"""

from __future__ import annotations

import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_exec_module = SourceFileLoader.exec_module


def exec_module(loader: SourceFileLoader, module: ModuleType) -> None:
    """Execute ``module`` as ``benchmarks.<stem>`` when it is a script of ``benchmarks/``."""
    path = Path(loader.path).resolve()
    name = module.__name__
    if path.parent != BENCHMARKS or name.startswith("benchmarks."):
        _exec_module(loader, module)
        return
    code = loader.get_code(name)
    module.__name__ = f"benchmarks.{path.stem}"
    sys.modules.setdefault(module.__name__, module)  # dataclasses look their module up by name
    try:
        exec(code, module.__dict__)  # what the loader does, under the other name
    finally:
        module.__name__ = name


SourceFileLoader.exec_module = exec_module  # type: ignore[method-assign]
