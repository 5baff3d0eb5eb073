"""Bit-identity of the permutation backends with numpy's ``RandomState(seed).permutation(N)``.

Waterfall's watermark is defined by numpy's legacy MT19937 seeding and shuffle, and the
published datasets were watermarked with it, so every position must match exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from waterdrum_hf.schemes import permutation as _permutation
from waterdrum_hf.schemes.permutation import full_permutations, permuted_positions

VOCAB_SIZES = [4096, 32000, 128000, 128256, 151936]
EDGE_IDS = [0, 2**31 - 1, 2**31, 2**32 - 1]


def numpy_permutation(seed: np.ndarray | tuple[int, ...], vocab_size: int) -> np.ndarray:
    """The definition: numpy's legacy permutation for a seed tuple."""
    return np.random.RandomState(tuple(int(s) for s in seed)).permutation(vocab_size)


def random_pairs(
    rng: np.random.Generator, vocab_size: int, num_seeds: int, per_seed: int, width: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """``num_seeds`` random seed tuples (id, previous tokens...), each paired with ``per_seed``
    tokens (random, plus 0, 1 and N-1 now and then so full and early-stopped shuffles both
    occur), shuffled together so that equal seeds are scattered through the input."""
    ids = rng.integers(0, 2**32, size=num_seeds)
    previous = rng.integers(0, vocab_size, size=(num_seeds, width - 1))
    unique = np.column_stack([ids, previous])
    seeds = np.repeat(unique, per_seed, axis=0)
    tokens = rng.integers(0, vocab_size, size=len(seeds))
    special = rng.random(len(seeds)) < 0.05
    tokens[special] = rng.choice([0, 1, vocab_size - 1], size=int(special.sum()))
    order = rng.permutation(len(seeds))
    return seeds[order], tokens[order]


def expected_positions(seeds: np.ndarray, tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    cache: dict[tuple[int, ...], np.ndarray] = {}
    out = np.empty(len(tokens), dtype=np.int64)
    for m, (seed, token) in enumerate(zip(seeds, tokens, strict=True)):
        key = tuple(int(s) for s in seed)
        if key not in cache:
            cache[key] = numpy_permutation(key, vocab_size)
        out[m] = cache[key][token]
    return out


@pytest.mark.parametrize("vocab_size", VOCAB_SIZES)
def test_positions_match_numpy(vocab_size: int) -> None:
    rng = np.random.default_rng(vocab_size)
    seeds, tokens = random_pairs(rng, vocab_size, num_seeds=300, per_seed=8)
    got = permuted_positions(seeds, tokens, vocab_size)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected_positions(seeds, tokens, vocab_size))


@pytest.mark.parametrize("vocab_size", VOCAB_SIZES)
def test_full_permutations_match_numpy(vocab_size: int) -> None:
    rng = np.random.default_rng(vocab_size + 1)
    seeds = np.column_stack([rng.integers(0, 2**32, 4), rng.integers(0, vocab_size, 4)])
    got = full_permutations(seeds, vocab_size)
    assert got.shape == (4, vocab_size)
    for seed, row in zip(seeds, got, strict=True):
        np.testing.assert_array_equal(row, numpy_permutation(seed, vocab_size))


@pytest.mark.parametrize("vocab_size", VOCAB_SIZES)
def test_edge_seeds(vocab_size: int) -> None:
    seeds = np.array([(i, p) for i in EDGE_IDS for p in (0, vocab_size - 1)], dtype=np.int64)
    expected = np.stack([numpy_permutation(seed, vocab_size) for seed in seeds])
    np.testing.assert_array_equal(full_permutations(seeds, vocab_size), expected)
    tokens = np.array([0, 1, vocab_size // 2, vocab_size - 1])
    pair_seeds = np.repeat(seeds, len(tokens), axis=0)
    pair_tokens = np.tile(tokens, len(seeds))
    np.testing.assert_array_equal(
        permuted_positions(pair_seeds, pair_tokens, vocab_size),
        expected[:, tokens].reshape(-1),
    )


@pytest.mark.parametrize("vocab_size", [1, 2, 3, 5, 17, 255, 256, 257, 1000])
def test_small_vocabularies(vocab_size: int) -> None:
    seeds = np.array([(i, p) for i in EDGE_IDS for p in {0, vocab_size - 1}], dtype=np.int64)
    expected = np.stack([numpy_permutation(seed, vocab_size) for seed in seeds])
    np.testing.assert_array_equal(full_permutations(seeds, vocab_size), expected)
    tokens = np.arange(vocab_size)
    np.testing.assert_array_equal(
        permuted_positions(
            np.repeat(seeds, vocab_size, axis=0), np.tile(tokens, len(seeds)), vocab_size
        ),
        expected.reshape(-1),
    )


@pytest.mark.parametrize("width", [1, 3, 4])
def test_other_seed_tuple_lengths(width: int) -> None:
    """n_gram = 3 gives (id, p1, p2); a 1-tuple is seeded by array too, unlike a bare int."""
    vocab_size = 32000
    rng = np.random.default_rng(width)
    seeds, tokens = random_pairs(rng, vocab_size, num_seeds=60, per_seed=5, width=width)
    np.testing.assert_array_equal(
        permuted_positions(seeds, tokens, vocab_size), expected_positions(seeds, tokens, vocab_size)
    )
    np.testing.assert_array_equal(
        full_permutations(seeds[:3], vocab_size),
        np.stack([numpy_permutation(seed, vocab_size) for seed in seeds[:3]]),
    )


def test_repeated_seeds_keep_input_order() -> None:
    vocab_size = 4096
    seeds = np.array([[7, 3], [1, 2], [7, 3], [7, 3], [1, 2]])
    tokens = np.array([5, 6, 0, 4095, 6])
    np.testing.assert_array_equal(
        permuted_positions(seeds, tokens, vocab_size), expected_positions(seeds, tokens, vocab_size)
    )
    full = full_permutations(seeds, vocab_size)
    np.testing.assert_array_equal(full[0], full[2])
    np.testing.assert_array_equal(full[1], numpy_permutation((1, 2), vocab_size))


def test_empty_input() -> None:
    empty = np.zeros((0, 2), dtype=np.int64)
    assert permuted_positions(empty, np.zeros(0, dtype=np.int64), 4096).shape == (0,)
    assert full_permutations(empty, 4096).shape == (0, 4096)


@pytest.mark.parametrize("bad", [-1, 2**32, 2**40])
def test_out_of_range_seeds_rejected_like_numpy(bad: int) -> None:
    with pytest.raises(ValueError, match="between 0 and 2"):
        np.random.RandomState((1, bad))
    seeds = np.array([[1, 2], [1, bad]], dtype=np.int64)
    with pytest.raises(ValueError, match="between 0 and 2\\*\\*32 - 1"):
        permuted_positions(seeds, np.array([0, 0]), 4096)
    with pytest.raises(ValueError, match="between 0 and 2\\*\\*32 - 1"):
        full_permutations(seeds, 4096)


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64, np.int32])
def test_any_integer_dtype_seeds(dtype: type) -> None:
    seeds = np.array([[2**31 - 1, 7], [0, 4095]], dtype=dtype)
    expected = [numpy_permutation(seed, 4096)[5] for seed in seeds]
    np.testing.assert_array_equal(permuted_positions(seeds, np.array([5, 5]), 4096), expected)


def test_huge_unsigned_seed_rejected() -> None:
    seeds = np.array([[1, 2**63]], dtype=np.uint64)
    with pytest.raises(ValueError, match="between 0 and 2\\*\\*32 - 1"):
        permuted_positions(seeds, np.array([0]), 4096)


def test_non_integer_seeds_rejected_like_numpy() -> None:
    with pytest.raises(TypeError):
        np.random.RandomState((1.0, 2))
    with pytest.raises(TypeError, match="integers"):
        permuted_positions(np.array([[1.0, 2.0]]), np.array([0]), 4096)


@pytest.mark.parametrize(
    ("seeds", "tokens", "message"),
    [
        (np.array([1, 2]), np.array([0, 0]), "2-D"),
        (np.zeros((2, 0), dtype=np.int64), np.array([0, 0]), "empty"),
        (np.array([[1, 2], [3, 4]]), np.array([0]), "shape"),
        (np.array([[1, 2]]), np.array([[0]]), "shape"),
        (np.array([[1, 2]]), np.array([4096]), "0..4095"),
        (np.array([[1, 2]]), np.array([-1]), "0..4095"),
    ],
)
def test_bad_shapes_and_tokens_rejected(
    seeds: np.ndarray, tokens: np.ndarray, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        permuted_positions(seeds, tokens, 4096)


@pytest.mark.parametrize("vocab_size", [0, -5, 2**31])
def test_bad_vocab_size_rejected(vocab_size: int) -> None:
    with pytest.raises(ValueError, match="vocab_size"):
        full_permutations(np.array([[1, 2]]), vocab_size)


def test_backends_agree() -> None:
    if _permutation.permutation_backend() != "numba":
        pytest.skip("numba backend not active")
    vocab_size = 128000
    rng = np.random.default_rng(11)
    seeds, tokens = random_pairs(rng, vocab_size, num_seeds=200, per_seed=10)
    np.testing.assert_array_equal(
        _permutation._positions_numba(seeds, tokens, vocab_size),
        _permutation._positions_numpy(seeds, tokens, vocab_size),
    )
    unique = seeds[:5]
    np.testing.assert_array_equal(
        _permutation._full_numba(unique, vocab_size), _permutation._full_numpy(unique, vocab_size)
    )


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_each_backend_answers_through_the_public_functions(backend: str, monkeypatch) -> None:
    """Both backends behind ``permuted_positions`` and ``full_permutations`` (picked at import,
    switched here in-process): numpy's positions and permutations, as int64, empty or not."""
    if backend == "numba":
        pytest.importorskip("numba")
    monkeypatch.setattr(_permutation, "_BACKEND", backend)
    vocab_size = 4096
    seeds, tokens = random_pairs(np.random.default_rng(3), vocab_size, num_seeds=20, per_seed=4)
    positions = permuted_positions(seeds, tokens, vocab_size)
    assert positions.dtype == np.int64
    np.testing.assert_array_equal(positions, expected_positions(seeds, tokens, vocab_size))
    full = full_permutations(seeds[:3], vocab_size)
    assert full.dtype == np.int64
    for seed, row in zip(seeds[:3], full, strict=True):
        np.testing.assert_array_equal(row, numpy_permutation(seed, vocab_size))
    empty = np.zeros((0, 2), dtype=np.int64)
    assert permuted_positions(empty, np.zeros(0, dtype=np.int64), vocab_size).dtype == np.int64
    assert full_permutations(empty, vocab_size).dtype == np.int64


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_active_backend_does_the_work(backend: str, monkeypatch) -> None:
    """Only the active backend's functions run (the other would give the same numbers, so a
    dispatch that picks the wrong one shows only here, or in the time it takes)."""
    if backend == "numba":
        pytest.importorskip("numba")
    other = "numpy" if backend == "numba" else "numba"

    def refuse(*args: object) -> None:
        raise AssertionError(f"the {other} backend ran")

    monkeypatch.setattr(_permutation, "_BACKEND", backend)
    monkeypatch.setattr(_permutation, f"_positions_{other}", refuse)
    monkeypatch.setattr(_permutation, f"_full_{other}", refuse)
    seeds, tokens = random_pairs(np.random.default_rng(4), 300, num_seeds=3, per_seed=2)
    np.testing.assert_array_equal(
        permuted_positions(seeds, tokens, 300), expected_positions(seeds, tokens, 300)
    )
    np.testing.assert_array_equal(
        full_permutations(seeds[:1], 300)[0], numpy_permutation(seeds[0], 300)
    )


@pytest.mark.parametrize("width", [2, 3])
def test_equal_seed_rows_are_grouped_once_in_lexicographic_order(width: int) -> None:
    """Every distinct seed tuple is one group (so one expansion), the groups sorted as tuples;
    rows that agree on all but a middle entry are different seeds."""
    rows = [[1] * width, [0, 9, 5][:width], [1] * width, [0, 2, 5][:width], [0, 9, 5][:width]]
    unique, order, bounds = _permutation._group_rows(np.array(rows, dtype=np.int64))
    expected = sorted({tuple(r) for r in rows})
    assert [tuple(u) for u in unique.tolist()] == expected
    for u, seed in enumerate(expected):
        members = sorted(order[bounds[u] : bounds[u + 1]].tolist())
        assert members == [i for i, r in enumerate(rows) if tuple(r) == seed]


def test_the_largest_vocabulary_is_accepted() -> None:
    """N = 2**31 - 1 (int32 positions) is allowed; nothing is expanded for no tokens."""
    largest = _permutation.MAX_VOCAB_SIZE
    none = np.zeros((0, 2), dtype=np.int64)
    assert permuted_positions(none, np.zeros(0, dtype=np.int64), largest).shape == (0,)


@pytest.mark.parametrize("vocab_size", [True, 3.0, "3", None])
def test_a_vocab_size_that_is_not_an_integer_is_refused(vocab_size: object) -> None:
    with pytest.raises(TypeError, match="`vocab_size` must be an integer"):
        full_permutations(np.array([[1, 2]]), vocab_size)  # type: ignore[arg-type]


@pytest.mark.parametrize("choice", ["numpy", "numba"])
def test_backend_can_be_forced(choice: str) -> None:
    if choice == "numba":
        pytest.importorskip("numba")
    code = (
        "import numpy as np; from waterdrum_hf.schemes import permutation as p; "
        "print(p.permutation_backend(), p.permuted_positions(np.array([[5, 9]]), np.array([3]), 4096)[0])"
    )
    env = {**os.environ, _permutation.BACKEND_ENV: choice}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    backend, position = result.stdout.split()
    assert backend == choice
    assert int(position) == numpy_permutation((5, 9), 4096)[3]


def test_unknown_backend_rejected() -> None:
    env = {**os.environ, _permutation.BACKEND_ENV: "cuda"}
    result = subprocess.run(
        [sys.executable, "-c", "import waterdrum_hf.schemes.permutation"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert _permutation.BACKEND_ENV in result.stderr


def parallel_sized_input() -> tuple[np.ndarray, np.ndarray, int]:
    """Enough work that the compiled backend spreads it over threads."""
    vocab_size = 4096
    rng = np.random.default_rng(5)
    seeds, tokens = random_pairs(rng, vocab_size, num_seeds=300, per_seed=3)
    return seeds, tokens, vocab_size


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_works_in_forked_child_after_use() -> None:
    """datasets.map(num_proc=...) forks after the parent verified; the child must still work."""
    seeds, tokens, vocab_size = parallel_sized_input()
    expected = permuted_positions(seeds, tokens, vocab_size)
    pid = os.fork()
    if pid == 0:  # child: report through the exit code only
        code = 1
        try:
            code = (
                0 if np.array_equal(permuted_positions(seeds, tokens, vocab_size), expected) else 2
            )
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_concurrent_calls_from_threads() -> None:
    seeds, tokens, vocab_size = parallel_sized_input()
    expected = permuted_positions(seeds, tokens, vocab_size)
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: permuted_positions(seeds, tokens, vocab_size), range(3)))
    for result in results:
        np.testing.assert_array_equal(result, expected)
