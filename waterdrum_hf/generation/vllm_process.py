"""A ``vllm serve`` process started from vLLM's own Python environment, for
:class:`~waterdrum_hf.generation.server.CompletionServer` to sample from.

vLLM pins an older transformers than this library needs, so the two cannot share an
environment; a script in this one can still start the server from the other
(``python=".venv-vllm/bin/python"``), score every adapter, and stop it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 300
"""How long :func:`vllm_server` waits for the server to answer (the built-in model on 2 CPU
cores: about 20 s)."""


@contextmanager
def vllm_server(
    python: str | os.PathLike[str],
    model: str | os.PathLike[str],
    *,
    served_name: str = "model",
    lora_modules: Mapping[str, str | os.PathLike[str]] | None = None,
    max_lora_rank: int = 16,
    options: Sequence[str] = (),
    environment: Mapping[str, str] | None = None,
    log: str | os.PathLike[str] | None = None,
    startup_seconds: float = STARTUP_SECONDS,
) -> Iterator[str]:
    """Serve ``model`` (as ``served_name``, with ``lora_modules`` by name) on a free loopback
    port with vLLM's OpenAI-compatible server run by ``python``; yields the API root
    (``http://127.0.0.1:PORT/v1``) once it answers, and stops the server after.

    ``options`` are more of the server's flags (e.g. ``("--dtype", "float32",
    "--enforce-eager")`` on a CPU), ``environment`` variables over this process's (e.g.
    ``{"VLLM_CPU_KVCACHE_SPACE": "1"}``); its output goes to ``log`` (discarded without one). A
    server that exits or does not answer within ``startup_seconds`` is an error quoting the
    end of its log.
    """
    port = _free_port()
    command = [
        str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
        "--served-model-name", served_name, "--port", str(port), *options,
    ]  # fmt: skip
    if lora_modules:
        command += ["--enable-lora", "--max-lora-rank", str(max_lora_rank), "--lora-modules"]
        command += [f"{name}={path}" for name, path in lora_modules.items()]
    with open(log or os.devnull, "w") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(environment or {})},
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_up(process, url, startup_seconds, log)
        yield url
    finally:
        _stop(process)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_up(
    process: subprocess.Popen[bytes],
    url: str,
    seconds: float,
    log: str | os.PathLike[str] | None,
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = Path(log).read_text()[-3000:] if log else "(no log: pass log=...)"
            raise RuntimeError(f"the vLLM server exited with code {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return
        except OSError:
            time.sleep(1)
    raise RuntimeError(f"the vLLM server did not answer at {url} within {seconds:g} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (its engine runs in child processes), then
    SIGKILL after 30 s."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
