"""The compiled kernel's plumbing: which backend imports, how a kernel is compiled, and how many
threads spread the seeds (the kernel's numbers are checked against numpy in test_permutation)."""

from __future__ import annotations

import builtins
import sys
import threading
import types

import pytest

from waterdrum_hf.schemes import mt19937
from waterdrum_hf.schemes.exp_edit import kernel

numba = pytest.importorskip("numba")

BIG = mt19937._MIN_PARALLEL_STEPS  # the fewest shuffle steps that may use threads


def test_the_backend_choice_decides_whether_numba_is_imported(monkeypatch):
    assert mt19937._import_numba("numpy") is None
    assert mt19937._import_numba("auto") is numba
    assert mt19937._import_numba("numba") is numba
    real_import = builtins.__import__

    def no_numba(name, *args, **kwargs):
        if name == "numba":
            raise ImportError("no numba here")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "numba")
    monkeypatch.setattr(builtins, "__import__", no_numba)
    assert mt19937._import_numba("auto") is None  # falls back to numpy
    with pytest.raises(ImportError, match="WATERDRUM_PERMUTATION_BACKEND=numba"):
        mt19937._import_numba("numba")


def add_one(x):
    return x + 1


@pytest.mark.parametrize("jit", [mt19937._jit, kernel._jit], ids=["permutation", "exp_edit"])
def test_kernels_compile_cached_and_without_the_gil(jit):
    """Both compiled schemes' kernels: numba dispatchers, cached on disk (compiled once per
    machine), releasing the GIL (their threads run in parallel)."""
    compiled = jit(add_one)
    assert isinstance(compiled, numba.core.dispatcher.Dispatcher)
    assert compiled.targetoptions["nogil"] is True
    assert type(compiled._cache).__name__ == "FunctionCache"


def test_without_numba_the_permutation_kernels_stay_python(monkeypatch):
    monkeypatch.setattr(mt19937, "_numba", None)
    assert mt19937._jit(add_one) is add_one


def use_cores(monkeypatch, cores: int | None, *, affinity: bool = True, numba_threads: int = 64):
    """Pretend the machine has ``cores`` usable cores (through the affinity mask, or through
    ``os.cpu_count`` where the platform has none) and numba ``numba_threads`` threads."""
    if affinity:
        monkeypatch.setattr(mt19937.os, "sched_getaffinity", lambda pid: set(range(cores)))
    else:
        monkeypatch.delattr(mt19937.os, "sched_getaffinity", raising=False)
        monkeypatch.setattr(mt19937.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(
        mt19937,
        "_numba",
        types.SimpleNamespace(config=types.SimpleNamespace(NUMBA_NUM_THREADS=numba_threads)),
    )


@pytest.mark.parametrize(
    ("n_keys", "vocab_size", "cores", "numba_threads", "expected"),
    [
        (8, BIG // 8 - 1, 4, 64, 1),  # too little work: the calling thread alone
        (8, BIG // 8, 4, 64, 4),  # just enough work: one thread per core
        (1, 10 * BIG, 4, 64, 1),  # one seed cannot be shared
        (3, BIG, 8, 64, 3),  # no more threads than seeds
        (16, BIG, 2, 64, 2),  # no more threads than cores
        (16, BIG, 8, 3, 3),  # no more threads than numba allows
    ],
)
def test_thread_count(monkeypatch, n_keys, vocab_size, cores, numba_threads, expected):
    use_cores(monkeypatch, cores, numba_threads=numba_threads)
    assert mt19937.thread_count(n_keys, vocab_size) == expected


def test_thread_count_without_an_affinity_mask_counts_the_cpus(monkeypatch):
    use_cores(monkeypatch, 3, affinity=False)
    assert mt19937.thread_count(16, BIG) == 3
    use_cores(monkeypatch, None, affinity=False)  # os.cpu_count() may not know
    assert mt19937.thread_count(16, BIG) == 1


def test_thread_count_without_numba_is_one(monkeypatch):
    monkeypatch.setattr(mt19937, "_numba", None)
    assert mt19937.thread_count(64, 100 * BIG) == 1


def record_calls(monkeypatch, threads: int) -> list[tuple[int, int, str]]:
    """Run ``run_spread`` as if ``thread_count`` said ``threads``; each kernel call's
    (first, step, thread name)."""
    monkeypatch.setattr(mt19937, "thread_count", lambda n_keys, vocab_size: threads)
    calls: list[tuple[int, int, str]] = []

    def kernel(out: list, first: int, step: int) -> None:
        out.append((first, step, threading.current_thread().name))

    mt19937.run_spread(kernel, 100, 1000, calls)
    return sorted(calls)


def test_one_thread_runs_the_kernel_on_the_calling_thread(monkeypatch):
    here = threading.current_thread().name
    assert record_calls(monkeypatch, 1) == [(0, 1, here)]


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_share_the_seeds_by_interleaving(monkeypatch, threads):
    calls = record_calls(monkeypatch, threads)
    assert [(first, step) for first, step, _ in calls] == [(i, threads) for i in range(threads)]
    assert all(name.startswith("waterdrum-permutation_") for *_, name in calls)
