"""Importing the library is silent, with torchao installed too: exactly torchao's import-time
lines are dropped, every other record of its loggers passes."""

from __future__ import annotations

import enum
import importlib.util
import logging
import os
import subprocess
import sys

import pytest

from waterdrum_hf.utils.backend_logs import drop_torchao_import_lines


def test_importing_the_trainers_and_audits_prints_nothing(tmp_path):
    """A fresh process: transformers imports torchao where it is installed (the quantization
    extra), which would print its kernel-library and enum-registration lines."""
    code = "import sys, waterdrum_hf.trainers, waterdrum_hf.audits; print('torchao' in sys.modules)"
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf_home"), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr[-3000:]
    installed = importlib.util.find_spec("torchao") is not None
    assert done.stdout == f"{installed}\n"  # torchao was imported, and said nothing


class _Local(enum.Enum):
    A = 1


class _Torchao(enum.Enum):
    A = 1


_Torchao.__module__ = "torchao.quantization.quantize_.common"

SO = "/venv/site-packages/torchao/_C_mxfp8.cpython-310-x86_64-linux-gnu.so"
DEPRECATED = (
    "%s is an Enum subclass and is now natively supported by torch.compile as an opaque value "
    "type. Calling register_constant() on Enum subclasses is deprecated and will be an error "
    "in a future release."
)


@pytest.mark.parametrize(
    ("logger", "message", "args", "dropped"),
    [
        ("torchao", f"Failed to load {SO}: Could not load this library: {SO}", (), True),
        ("torchao", "Failed to load /x/torchao/_C_cutlass_90a.abi3.so: undefined symbol", (), True),
        ("torchao", "Failed to load my_model.bin: not found", (), False),
        ("torchao", "Skipping import of cpp extensions due to incompatible torch", (), False),
        ("torch.utils._pytree", DEPRECATED, (_Torchao,), True),
        ("torch.utils._pytree", DEPRECATED, (_Local,), False),  # the user's own enum
        ("torch.utils._pytree", "something else about %s", (_Torchao,), False),
    ],
)
def test_only_torchaos_import_lines_are_dropped(logger, message, args, dropped, caplog):
    drop_torchao_import_lines()
    drop_torchao_import_lines()  # once is enough, twice changes nothing
    filters = logging.getLogger(logger).filters
    assert [type(f).__name__ for f in filters].count("_TorchaoImportLines") == 1
    with caplog.at_level(logging.WARNING, logger=logger):
        logging.getLogger(logger).warning(message, *args)
    assert len(caplog.records) == (0 if dropped else 1)
