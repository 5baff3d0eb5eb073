"""Probes of the scoring core's uncounted mutants (statistics, seed comparison, config, scoring,
verification, the nulls, the bootstrap, the losses and the schemes): see ``probes.py``.

Each probe goes through the public API where it can, with the inputs a judgement's proof must
hold for: ids and values of other dtypes (uint64, float32, bool, empty lists), ties where a
sort's stability could show, a one-token vocabulary, zero counts under ``divide="raise"``, and
every refusal of the function (``each``), so a message-only mutant that raises another type is
seen too.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from probe_kit import each, use_test_helpers

_PKG = "waterdrum_hf."
NAN = float("nan")
KEYS = [3_000_000_017, 3_999_999_929, 17]


def _tokenizer(vocab: int = 97) -> Any:
    use_test_helpers()
    from tokenizer_builders import word_tokenizer

    return word_tokenizer(vocab)


def _texts(count: int, length: int = 12, vocab: int = 97, seed: int = 3) -> list[str]:
    use_test_helpers()
    from tokenizer_builders import word_texts

    return list(word_texts(vocab, count, length, seed=seed))


def _verifier(scheme: Any = "waterfall", vocab: int = 97, **kwargs: Any) -> Any:
    from waterdrum_hf import Verifier

    return Verifier(_tokenizer(vocab), scheme, **kwargs)


def _numpy(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().numpy()


# -- statistics -----------------------------------------------------------------------------


def finite_1d(tmp: Path) -> Any:
    from waterdrum_hf.statistics import separability_auroc

    return each(
        lambda: separability_auroc([[1.0, 2.0]], [1.0]),
        lambda: separability_auroc([1.0, NAN, math.inf], [0.5]),
        lambda: separability_auroc(np.array([1, 2], dtype=np.uint64), [1.5]),
    )


def calibration_r2(tmp: Path) -> Any:
    from waterdrum_hf.statistics import calibration_r2 as fit

    return each(
        lambda: fit([0.1, 0.2], [1.0]),
        lambda: fit([0.5], [1.0]),
        lambda: fit([0, 0], [1.0, 2.0]),
        lambda: fit([0.1, 0.2], [3.0, 3.0]),
        lambda: fit(np.array([0.1, 0.5, 1.0], dtype=np.float32), [0.2, 0.4, 1.1]),
    )


def holm_adjusted(tmp: Path) -> Any:
    from waterdrum_hf.statistics import holm_adjusted as holm

    return each(
        lambda: holm([[0.1, 0.2]]),
        lambda: holm([0.5, 1.5]),
        lambda: holm([-0.1]),
        lambda: holm([0.01, None, 0.04, 0.04, NAN]),
    )


def holm_min_null_keys(tmp: Path) -> Any:
    from waterdrum_hf.statistics import holm_min_null_keys as keys

    return each(lambda: keys(0, 0.05), lambda: keys(3, 1.0), lambda: keys(3, 0.05))


def null_p_value(tmp: Path) -> Any:
    from waterdrum_hf.statistics import null_p_value as p

    return each(
        lambda: p(0.1, []),
        lambda: p(NAN, [0.1]),
        lambda: p(math.inf, [0.1]),
        lambda: p(0.1, [0.0, 0.1, 0.2]),
    )


def separability_auroc(tmp: Path) -> Any:
    from waterdrum_hf.statistics import separability_auroc as auroc

    return each(
        lambda: auroc([], [1.0]),
        lambda: auroc([1.0], []),
        lambda: auroc([0.3, 0.1, 0.3], [0.1, 0.2]),
    )


# -- seed comparison ------------------------------------------------------------------------


def _result(forget: float, retain: float) -> Any:
    from waterdrum_hf import SetValue, WaterDrumResult

    return WaterDrumResult(
        forget=SetValue(forget), retain=SetValue(retain), num_queries=6, num_scored=24,
        num_skipped=0,
    )  # fmt: skip


def finite(tmp: Path) -> Any:
    from waterdrum_hf import difference_interval

    return each(
        lambda: difference_interval([], [1.0]),
        lambda: difference_interval([[1.0]], [1.0]),
        lambda: difference_interval([NAN, 1.0], [1.0, 2.0]),
        lambda: difference_interval([1.0, 2.0], [1.0, math.inf]),
        lambda: difference_interval([0.1, 0.3, 0.2], [0.0, 0.1, 0.1]),
    )


def typed_runs(tmp: Path) -> Any:
    from waterdrum_hf import compare_seeds

    one, two = _result(0.1, 0.2), _result(0.15, 0.25)
    return each(
        lambda: compare_seeds({}),
        lambda: compare_seeds([one]),  # type: ignore[arg-type]
        lambda: compare_seeds({"kl": []}),
        lambda: compare_seeds({"kl": one}),
        lambda: compare_seeds({"kl": "runs"}),
        lambda: compare_seeds({"kl": [one], "npo": [one, two]}),
        lambda: compare_seeds({"kl": [one], "npo": [one, two]}, paired=False),
        lambda: compare_seeds({"kl": [one, two], "retrained": [two, one.to_dict()]}),
    )


def difference_interval(tmp: Path) -> Any:
    from waterdrum_hf import difference_interval as diff

    return each(
        lambda: diff([1.0, 2.0], [1.0, 2.0, 3.0]),
        lambda: diff([1.0, 2.0], [1.0, 2.0, 3.0], paired=False),
        lambda: diff([0.2, 0.4, 0.1], [0.1, 0.1, 0.3]),
    )


# -- bootstrap ------------------------------------------------------------------------------


def check_confidence(tmp: Path) -> Any:
    from waterdrum_hf.bootstrap import check_confidence as check

    return each(
        lambda: check("0.9"),
        lambda: check(True),
        lambda: check(None),
        lambda: check(1.5),
        lambda: check(NAN),
        lambda: check(0),
        lambda: check(np.float32(0.9)),
    )


def check_resamples(tmp: Path) -> Any:
    from waterdrum_hf.bootstrap import check_resamples as check

    return each(
        lambda: check("200"),
        lambda: check(True),
        lambda: check(200.0),
        lambda: check(10),
        lambda: check(np.int64(200)),
    )


def _tied_scores() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Many tied negatives (quicksort reorders them) with unequal weights per row."""
    rng = np.random.default_rng(5)
    negative = rng.choice([0.1, 0.2, 0.3, 0.5], size=60)
    positive = rng.choice([0.2, 0.3, 0.4, 0.6], size=40)
    return (
        positive,
        negative,
        rng.integers(0, 4, (7, 40)).astype(np.int64),
        rng.integers(0, 4, (7, 60)).astype(np.int64),
    )


def weighted_auroc(tmp: Path) -> Any:
    from waterdrum_hf.bootstrap import weighted_auroc as auroc

    positive, negative, pw, nw = _tied_scores()
    return [
        auroc(positive, negative, pw, nw),
        auroc(positive.astype(np.float32), negative.astype(np.float32), pw, nw),
        auroc(negative[:30], positive, nw[:, :30], pw),
    ]


def bootstrap_replicates(tmp: Path) -> Any:
    from waterdrum_hf.bootstrap import bootstrap_replicates as replicates

    strata = np.repeat([1, 2, 3], 8)
    forget = np.isin(strata, [1])
    means = {"forget": forget, "retain": ~forget}
    rng = np.random.default_rng(2)
    floats = rng.normal(size=24)
    inputs = [
        floats,
        floats.astype(np.float32),
        floats.astype(np.float16),
        rng.integers(0, 5, 24).tolist(),
        rng.integers(0, 5, 24).astype(np.uint64),
        rng.integers(0, 2, 24).astype(bool),
    ]
    return [
        replicates(v, strata, means, auroc=(~forget, forget), resamples=150, seed=4) for v in inputs
    ]


# -- analytic null --------------------------------------------------------------------------


def normal_p_value(tmp: Path) -> Any:
    from waterdrum_hf.scoring.analytic_null import normal_p_value as p

    return each(
        lambda: p(1.0, 0.0, 0.0),
        lambda: p(1.0, 0.0, -1.0),
        lambda: p(1.0, 0.0, NAN),
        lambda: p(0.3, 0.1, 0.2),
    )


def _analytic_nulls(n_gram: int) -> list[Any]:
    """The null of real texts' pairs with token ids and sample indices as int64, uint64,
    int32 and Python ints; then a decreasing ``sample_of``, refused."""
    from waterdrum_hf import WaterfallScheme
    from waterdrum_hf.scoring.analytic_null import AnalyticNull

    verifier = _verifier(WaterfallScheme(n_gram=n_gram))
    contexts, tokens, sample_of = verifier.countable_pairs(verifier.token_ids(_texts(5)))
    moments = verifier.scheme.null_moments(verifier.vocab_size)
    samples, weights = np.array([0, 2, 4]), np.array([0.5, 0.25, 0.25])

    def build(kind: Any) -> Any:
        def cast(a: np.ndarray) -> Any:
            return a.tolist() if kind is list else a.astype(kind)

        null = AnalyticNull(cast(contexts), cast(tokens), cast(sample_of), 5, moments)
        return [null.pair_weights(samples, weights), null.mean_std(samples, weights)]

    return each(
        *(lambda kind=kind: build(kind) for kind in (np.int64, np.uint64, np.int32, list)),
        lambda: AnalyticNull(contexts, tokens, sample_of[::-1], 5, moments),
    )


def analytic_null_init(tmp: Path) -> Any:
    """Pairs of real texts, n_gram 2 (the previous token is the context) and 3."""
    return [_analytic_nulls(2), _analytic_nulls(3)]


def distinct_pairs(tmp: Path) -> Any:
    """``pair_weights`` and ``mean_std`` of several sample sets (repeats, one sample, none)."""
    from waterdrum_hf.scoring.analytic_null import AnalyticNull

    verifier = _verifier()
    contexts, tokens, sample_of = verifier.countable_pairs(verifier.token_ids(_texts(6)))
    null = AnalyticNull(contexts, tokens, sample_of, 6, verifier.scheme.null_moments(97))
    sets = [([0, 1, 2], [0.2, 0.3, 0.5]), ([3, 3], [1.0, 1.0]), ([5], [1.0]), ([], [])]
    return [
        [null.pair_weights(np.array(s, dtype=np.int64), np.array(w)), null.mean_std(s, w)]
        for s, w in sets
    ]


# -- config ---------------------------------------------------------------------------------


def checked_part(tmp: Path) -> Any:
    from waterdrum_hf import WaterDrumConfig

    return each(
        lambda: WaterDrumConfig.from_dict({"null": 3}),
        lambda: WaterDrumConfig.from_dict({"interval": ["confidence"]}),
        lambda: WaterDrumConfig.from_dict({"null": {"bogus": 1}}),
        lambda: WaterDrumConfig.from_dict({"null": {"method": "empirical", "keys": 5}}),
    )


def interval_of_keywords(tmp: Path) -> Any:
    from waterdrum_hf import WaterDrumConfig

    return each(
        lambda: WaterDrumConfig.from_keywords({"bootstrap_seed": 3}),
        lambda: WaterDrumConfig.from_keywords({"bootstrap_resamples": 200}),
        lambda: WaterDrumConfig.from_keywords({"confidence": 0.9, "bootstrap_resamples": 200}),
    )


def null_of_keywords(tmp: Path) -> Any:
    from waterdrum_hf import WaterDrumConfig

    return each(
        lambda: WaterDrumConfig.from_keywords({"null": "analytic", "null_seed": 1}),
        lambda: WaterDrumConfig.from_keywords({"null": "none", "null_keys": 3}),
        lambda: WaterDrumConfig.from_keywords({"null": "empirical", "null_seed": 2}),
        lambda: WaterDrumConfig.from_keywords({"null": "none"}),
    )


def null_config_post_init(tmp: Path) -> Any:
    from waterdrum_hf.config import NullConfig

    return each(
        lambda: NullConfig("bogus"),  # type: ignore[arg-type]
        lambda: NullConfig("empirical"),
        lambda: NullConfig("analytic", keys=3),
        lambda: NullConfig("empirical", keys=4, seed=2),
    )


def config_post_init(tmp: Path) -> Any:
    from waterdrum_hf import WaterDrumConfig

    return each(
        lambda: WaterDrumConfig(scheme="waterfall"),  # type: ignore[arg-type]
        lambda: WaterDrumConfig(pooling="max"),  # type: ignore[arg-type]
        lambda: WaterDrumConfig(null="analytic"),  # type: ignore[arg-type]
        lambda: WaterDrumConfig(interval=0.9),  # type: ignore[arg-type]
        lambda: WaterDrumConfig(pooling="mean"),
    )


def from_dict(tmp: Path) -> Any:
    from waterdrum_hf import WaterDrumConfig

    return each(
        lambda: WaterDrumConfig.from_dict([("pooling", "mean")]),  # type: ignore[arg-type]
        lambda: WaterDrumConfig.from_dict({"bogus": 1}),
        lambda: WaterDrumConfig.from_dict({"pooling": "mean", "scheme": {"scheme": "kgw"}}),
    )


def from_json(tmp: Path) -> Any:
    """Files with non-ASCII text (a refused value, an unknown key) and a valid one."""
    from waterdrum_hf import WaterDrumConfig

    (tmp / "bad.json").write_bytes('{"pooling": "t\u00f6kens"}\n'.encode())
    (tmp / "key.json").write_bytes('{"sch\u00e9me": null}\n'.encode())
    (tmp / "good.json").write_bytes(b'{"pooling": "mean", "null": {"method": "analytic"}}\n')
    return each(
        lambda: WaterDrumConfig.from_json(tmp / "bad.json"),
        lambda: WaterDrumConfig.from_json(str(tmp / "key.json")),
        lambda: WaterDrumConfig.from_json(tmp / "good.json"),
        lambda: WaterDrumConfig.from_json('{"pooling": "mean"}'),
    )


def from_keywords(tmp: Path) -> Any:
    from waterdrum_hf import WaterDrumConfig

    return each(
        lambda: WaterDrumConfig.from_keywords({"bogus": 1}),
        lambda: WaterDrumConfig.from_keywords({"scheme": "KGW", "gamma": 0.25}),
    )


def to_json(tmp: Path) -> Any:
    """The files written (compared by the runner) and the text, for two configurations."""
    from waterdrum_hf import KGWScheme, WaterDrumConfig
    from waterdrum_hf.config import IntervalConfig, NullConfig

    plain = WaterDrumConfig()
    full = WaterDrumConfig(
        KGWScheme(gamma=0.25), "mean", NullConfig("empirical", keys=7), IntervalConfig(0.9)
    )
    return [plain.to_json(tmp / "plain.json"), full.to_json(str(tmp / "full.json"))]


# -- scoring --------------------------------------------------------------------------------


def checked_config(tmp: Path) -> Any:
    from waterdrum_hf.scoring.compute import waterdrum_result

    texts = _texts(2)
    return each(
        lambda: waterdrum_result(texts, [1, 2], _tokenizer(), config={"pooling": "mean"}),
        lambda: waterdrum_result(texts, [1, 2], _tokenizer(), config=None).to_dict(),
    )


def waterdrum_result(tmp: Path) -> Any:
    from waterdrum_hf.scoring.compute import waterdrum_result as result

    return each(lambda: result(_texts(2), [1, 2]), lambda: result(_texts(2), [1, 2], None))


def group_queries(tmp: Path) -> Any:
    from waterdrum_hf.scoring.inputs import group_queries as group

    return each(
        lambda: group("w1 w2", [1], None),
        lambda: group([], [], None),
        lambda: group(("w1",), [1], None),
        lambda: group([["w1"], ["w2"]], [1, 2], ["a", "b"]),
        lambda: group([["w1"], ["w2"]], [1], None),
        lambda: group([["w1"], "w2"], [1, 2], None),
        lambda: group([["w1", "w2"], []], [1, 2], None),
        lambda: group(["w1", "w2"], [1, 1], ["a"]),
        lambda: group(["w1", "w2", "w3"], [1, 2, 1], ["a", "a", "b"]),
        lambda: group(["w1", "w2", "w3"], [7, 9, 7], ["q1", "q2", "q1"]),
        lambda: group(["w1", "w2", "w3"], np.array([7, 9, 7], dtype=np.uint64), [3.0, 1, 3]),
        lambda: group(["w1", "w2"], [7, 9], None),
    )


def owner_display_names(tmp: Path) -> Any:
    from waterdrum_hf.scoring.inputs import owner_display_names as names

    ids = np.array([5, 7, 5, 9])
    return each(
        lambda: names(ids, ["a"]),  # type: ignore[arg-type]
        lambda: names(ids, {5: ""}),
        lambda: names(ids, {5: 3}),  # type: ignore[dict-item]
        lambda: names(ids, {5: "a", 7: "a"}),
        lambda: names(ids, {7: "owner-1"}),
        lambda: names(ids.astype(np.uint64), None),
    )


def set_masks(tmp: Path) -> Any:
    from waterdrum_hf.scoring.inputs import set_masks as masks

    ids = np.array([5, 7, 5, 9], dtype=np.int64)
    return each(
        lambda: masks(ids, "57"),  # type: ignore[arg-type]
        lambda: masks(ids, 5),  # type: ignore[arg-type]
        lambda: masks(ids, [5, 11]),
        lambda: masks(ids, None),
        lambda: masks(ids, np.array([9], dtype=np.uint64)),
    )


def warn_skipped(tmp: Path) -> Any:
    from waterdrum_hf.scoring.inputs import warn_skipped as warn

    return each(
        lambda: warn(["", "w1", "w2 w3", " "], np.array([0, 0, 3, 0]), "n_gram=2 tokens"),
        lambda: warn(["w1"], np.array([0]), "n_gram=2 tokens"),
    )


def _pooling_inputs() -> tuple[np.ndarray, np.ndarray, Any]:
    """Real sums of 7 samples in 4 queries, one query with no countable token at all."""
    from waterdrum_hf.scoring.inputs import group_queries

    texts = _texts(7)
    texts[2] = texts[5] = ""
    queries = group_queries(texts, [1, 1, 2, 1, 3, 2, 3], ["a", "a", "b", "c", "d", "b", "d"])
    verifier = _verifier()
    ids = np.array([[1, 5], [1, 5], [2, 5], [1, 5], [3, 5], [2, 5], [3, 5]], dtype=np.int64)
    sums, counts = verifier.token_sums(verifier.token_ids(texts), ids)
    return sums, counts, queries


def pool_queries(tmp: Path) -> Any:
    from waterdrum_hf.scoring.pooling import pool_queries as pool

    sums, counts, queries = _pooling_inputs()
    outcomes = each(lambda: pool(sums, counts, queries, "tokens"))
    outcomes += each(lambda: pool(sums, counts, queries, "mean"))
    with np.errstate(all="raise"):
        outcomes += each(lambda: pool(sums, counts, queries, "tokens"))
        outcomes += each(lambda: pool(sums, counts, queries, "mean"))
    return outcomes


def sample_weights(tmp: Path) -> Any:
    from waterdrum_hf.scoring.pooling import sample_weights as weights

    _, counts, queries = _pooling_inputs()
    return each(
        lambda: weights(counts, queries, "tokens"),
        lambda: weights(counts, queries, "mean"),
    )


def owner_value_from_dict(tmp: Path) -> Any:
    from waterdrum_hf.scoring.results import OwnerValue

    return each(
        lambda: OwnerValue.from_dict({"value": 0.1, "bogus": 1}),
        lambda: OwnerValue.from_dict({"num_queries": 2, "num_scored_queries": 1, "value": 0.1}),
    )


def result_from_dict(tmp: Path) -> Any:
    from waterdrum_hf import WaterDrumResult

    flat = _result(0.1, 0.2).to_dict()
    return each(
        lambda: WaterDrumResult.from_dict([("forget", 0.1)]),  # type: ignore[arg-type]
        lambda: WaterDrumResult.from_dict({**flat, "bogus": 1}),
        lambda: WaterDrumResult.from_dict({"forget": 0.1}),
        lambda: WaterDrumResult.from_dict(flat),
    )


# -- verification ---------------------------------------------------------------------------


def nan_reduce(tmp: Path) -> Any:
    """Null references with unscored texts: some texts, and all of them."""
    verifier = _verifier()
    texts = _texts(4)
    some = verifier.null_reference([*texts, "", "w1"], 4)
    none = verifier.null_reference(["", "w2"], 3)
    return [[r.key_means, r.mean, r.std] for r in (some, none)]


def load_tokenizer(tmp: Path) -> Any:
    from waterdrum_hf import Verifier

    return each(
        lambda: Verifier("tiny"),
        lambda: Verifier(5),
        lambda: Verifier(object()),
        lambda: repr(Verifier(_tokenizer())),
    )


def null_reference(tmp: Path) -> Any:
    from waterdrum_hf import null_reference as reference

    ref = reference(_texts(3), _tokenizer(), num_keys=3)
    return [ref.keys, ref.sums, ref.counts]


def scores_from_sums(tmp: Path) -> Any:
    from waterdrum_hf.scoring.verification import scores_from_sums as scores

    verifier = _verifier()
    ids = verifier.token_ids([*_texts(3), "", "w4"])
    sums, counts = verifier.token_sums(ids, np.array([[1, 2]] * 5, dtype=np.int64))
    with np.errstate(all="raise"):
        raised = each(lambda: scores(sums, counts))
    return [scores(sums, counts), raised]


def verifier_init(tmp: Path) -> Any:
    from waterdrum_hf import Verifier

    tokenizer = _tokenizer()
    return each(
        lambda: repr(Verifier(tokenizer)),
        lambda: Verifier(tokenizer).verify(_texts(2), KEYS[0]),
        lambda: Verifier(tokenizer, vocab_size=64),
        lambda: repr(Verifier(tokenizer, "KGW", vocab_size=97)),
    )


def report_unscored(tmp: Path) -> Any:
    verifier = _verifier()
    return verifier.verify([*_texts(2), "", "w3"], KEYS[:1] * 4)


def countable_pairs(tmp: Path) -> Any:
    """No texts, an empty text first, uint64 and 2-D ids, ids out of the vocabulary."""
    verifier = _verifier()
    return each(
        lambda: verifier.countable_pairs([]),
        lambda: verifier.countable_pairs([[], [5, 6, 7]]),
        lambda: verifier.countable_pairs([np.array([3, 4, 5], dtype=np.uint64)]),
        lambda: verifier.countable_pairs([np.array([[1, 2], [3, 4]])]),
        lambda: verifier.countable_pairs([[1, 200, 3, 4], (5, 6)]),
    )


def shared_key_sums(tmp: Path) -> Any:
    """Keys as a list, uint32, uint64 and float arrays, one row or one column of a 2-D array;
    texts with a repeated pair."""
    verifier = _verifier()
    ids = verifier.token_ids([*_texts(3), "w1 w2 w1 w2", ""])
    keys = [KEYS[0], 5, 9]
    return each(
        lambda: verifier.shared_key_sums(ids, keys),
        lambda: verifier.shared_key_sums(ids, np.array(keys, dtype=np.uint32)),
        lambda: verifier.shared_key_sums(ids, np.array(keys, dtype=np.uint64)),
        lambda: verifier.shared_key_sums(ids, np.array(keys, dtype=np.float64)),
        lambda: verifier.shared_key_sums(ids, np.array([keys])),
        lambda: verifier.shared_key_sums(ids, np.array([[k] for k in keys])),
        lambda: verifier.shared_key_sums(ids[:1], []),
    )


def token_ids(tmp: Path) -> Any:
    verifier = _verifier()
    return each(
        lambda: verifier.token_ids(["", "w1 w2", "w96 zz"]),
        lambda: verifier.token_ids("w1"),
    )


def token_sums(tmp: Path) -> Any:
    """Texts whose first keys tie (unstable sorts reorder them), two key columns, chunks."""
    verifier = _verifier(chunk_pairs=40)
    ids = verifier.token_ids(_texts(30, length=8))
    first = np.array([KEYS[i % 3] for i in range(30)], dtype=np.int64)
    watermark_ids = np.stack([first, first[::-1]], axis=1)
    return verifier.token_sums(ids, watermark_ids)


# -- losses ---------------------------------------------------------------------------------


def _logits(batch: int = 2, length: int = 5, vocab: int = 7, seed: int = 0) -> tuple[Any, Any]:
    import torch

    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, length, vocab, generator=generator)
    labels = torch.randint(0, vocab, (batch, length), generator=generator)
    labels[0, :2] = -100
    labels[-1, -1] = -100
    return logits, labels


def check_beta(tmp: Path) -> Any:
    import torch

    from waterdrum_hf.trainers.losses import npo_loss

    t = torch.tensor([-1.0, -2.0])
    return each(
        lambda: npo_loss(t, t, 0.0),
        lambda: npo_loss(t, t, -1.0),
        lambda: npo_loss(t, t, NAN),
        lambda: _numpy(npo_loss(t, t - 1, 0.5)),
    )


def check_shapes(tmp: Path) -> Any:
    from waterdrum_hf.trainers.losses import sequence_nll

    logits, labels = _logits()
    return each(
        lambda: sequence_nll(logits[0], labels[0]),
        lambda: sequence_nll(logits, labels[:, :-1]),
        lambda: _numpy(sequence_nll(logits, labels)),
    )


def sequence_log_prob(tmp: Path) -> Any:
    from waterdrum_hf.trainers.losses import sequence_log_prob as log_prob

    logits, labels = _logits(batch=3)
    return [_numpy(log_prob(logits, labels)), _numpy(log_prob(logits[:1, :2], labels[:1, :2]))]


def sequence_nll(tmp: Path) -> Any:
    from waterdrum_hf.trainers.losses import sequence_nll as nll

    logits, labels = _logits(batch=3)
    return each(
        lambda: nll(logits, labels, "max"),  # type: ignore[arg-type]
        lambda: _numpy(nll(logits, labels)),
        lambda: _numpy(nll(logits, labels, "sum")),
        lambda: _numpy(nll(logits[:1, :2], labels[:1, :2])),
    )


def simnpo_loss(tmp: Path) -> Any:
    import torch

    from waterdrum_hf.trainers.losses import simnpo_loss as simnpo

    t = torch.tensor([-1.0, -0.5])
    return each(
        lambda: simnpo(t, 1.0, -0.1),
        lambda: simnpo(t, 0.0),
        lambda: _numpy(simnpo(t, 0.5, 0.2)),
    )


def token_kl(tmp: Path) -> Any:
    """Float32 and bf16 logits, a row without labels, and under float64 as torch's default."""
    import torch

    from waterdrum_hf.trainers.losses import token_kl as kl

    logits, labels = _logits(batch=3)
    ref, _ = _logits(batch=3, seed=1)
    labels[1] = -100
    outcomes = each(
        lambda: kl(ref[:, :-1], logits, labels),
        lambda: _numpy(kl(ref, logits, labels)),
        lambda: _numpy(kl(ref.bfloat16(), logits.bfloat16(), labels)),
    )
    torch.set_default_dtype(torch.float64)
    try:
        outcomes += each(lambda: _numpy(kl(ref, logits, labels)))
    finally:
        torch.set_default_dtype(torch.float32)
    return outcomes


def token_log_probs(tmp: Path) -> Any:
    """A one-token vocabulary (every log-prob 0) and a two-token one, with masked labels."""
    from waterdrum_hf.trainers.losses import token_log_probs as log_probs

    outcomes = []
    for vocab in (1, 2, 7):
        logits, labels = _logits(vocab=vocab)
        outcomes += each(lambda logits=logits, labels=labels: [
            _numpy(t) for t in log_probs(logits, labels)
        ])  # fmt: skip
    return outcomes


# -- schemes --------------------------------------------------------------------------------


def sequence_token_terms(tmp: Path) -> Any:
    from waterdrum_hf.schemes import SCHEMES

    scheme = SCHEMES["exp_edit"]()
    ids = np.array([1, 2])
    return each(lambda: scheme.token_terms(ids, np.array([[3], [4]]), np.array([5, 6]), 16))


def null_moments(tmp: Path) -> Any:
    from waterdrum_hf.schemes import SCHEMES

    return each(lambda: SCHEMES["exp_edit"]().null_moments(64))


def kgw_post_init(tmp: Path) -> Any:
    from waterdrum_hf import KGWScheme

    return each(
        lambda: KGWScheme(gamma="0.5"),  # type: ignore[arg-type]
        lambda: KGWScheme(gamma=True),
        lambda: KGWScheme(gamma=1.5),
        lambda: KGWScheme(gamma=0),
        lambda: KGWScheme(gamma=0.25).settings(),
    )


def kgw_check_vocab_size(tmp: Path) -> Any:
    """gamma just below 1 and small ones, over small and large vocabularies."""
    from waterdrum_hf import KGWScheme

    below_one = math.nextafter(1.0, 0.0)
    cases = [
        (gamma, size)
        for gamma in (below_one, 0.999, 0.5, 0.01)
        for size in (1, 2, 3, 7, 64, 2**31 - 1, 2**31, 2**40 + 1)
    ]
    return each(*(lambda g=g, n=n: KGWScheme(gamma=g).check_vocab_size(n) for g, n in cases))


def kgw_position_bias(tmp: Path) -> Any:
    from waterdrum_hf import KGWScheme

    scheme = KGWScheme(gamma=0.25)
    return each(
        lambda: scheme.position_bias(8, delta=-1.0),
        lambda: scheme.position_bias(8, delta=NAN),
        lambda: scheme.position_bias(8, delta=True),  # type: ignore[arg-type]
        lambda: scheme.position_bias(8, delta=3),
    )


def kgw_position_terms(tmp: Path) -> Any:
    from waterdrum_hf import KGWScheme

    scheme = KGWScheme(gamma=0.25)
    positions = [0, 1, 2, 3, 5, 7]
    return [
        scheme.position_terms(p, 8)
        for p in (positions, np.array(positions, dtype=np.uint8), np.array([], dtype=np.int64))
    ]


def checked_row_ids(tmp: Path) -> Any:
    from waterdrum_hf.schemes.permutation_processor import checked_row_ids as checked

    return each(
        lambda: checked([]),
        lambda: checked(np.array([], dtype=np.int64)),
        lambda: checked(5),
        lambda: checked(np.uint32(5)),
        lambda: checked([5, 2**32 - 1]),
    )


def _processor(ids: Any, **kwargs: Any) -> Any:
    from waterdrum_hf.schemes.waterfall.processor import WaterfallLogitsProcessor

    return WaterfallLogitsProcessor(16, ids, kappa=2.0, **kwargs)


def _generate(processor: Any, rows: int, steps: int = 3, seed: int = 0) -> list[np.ndarray]:
    """The processor's outputs over a few steps of random tokens (some out of the vocabulary)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(0, 18, (rows, 4), generator=generator)
    input_ids[0, -1] = 17  # a context outside the vocabulary: an identity row
    outputs = []
    for _ in range(steps):
        scores = torch.randn(rows, 18, generator=generator)
        outputs.append(_numpy(processor(input_ids, scores)))
        input_ids = torch.cat([input_ids, torch.randint(0, 16, (rows, 1), generator=generator)], 1)
    return outputs


def processor_call(tmp: Path) -> Any:
    return each(
        lambda: _generate(_processor([7, 9]), 4),
        lambda: _generate(_processor([7, 9]), 3),
        lambda: _generate(_processor(KEYS, n_gram=3), 6),
        lambda: _generate(_processor(5), 2, seed=1),
    )


def processor_init(tmp: Path) -> Any:
    from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor

    return each(
        lambda: PermutationLogitsProcessor(16, 1, np.zeros(5)),
        lambda: PermutationLogitsProcessor(16, 1, np.full(16, np.inf)),
        lambda: repr(PermutationLogitsProcessor(16, [1, 2], np.arange(16.0))),
    )


def permutations(tmp: Path) -> Any:
    """A cache of one and of many: hits, evictions, repeated seeds within a batch."""
    small = _processor([7, 7, 9], cache_size=1)
    large = _processor([7, 7, 9])
    return [
        _generate(small, 6, steps=4),
        _generate(large, 6, steps=4),
        list(small._cache),
        list(large._cache),
    ]


def resolve_scheme(tmp: Path) -> Any:
    from waterdrum_hf import WaterfallScheme
    from waterdrum_hf.schemes.registry import resolve_scheme as resolve

    return each(
        lambda: resolve("waterfall", bogus=1),
        lambda: resolve(WaterfallScheme(), k_p=1),
        lambda: resolve(WaterfallScheme(), k_p=None),
        lambda: resolve("nope"),
        lambda: resolve(5),  # type: ignore[arg-type]
        lambda: resolve("waterfall", gamma=0.5),
        lambda: resolve("exp_edit", k_p=2),
        lambda: resolve("kgw", k_p=1),
        lambda: resolve(),
        lambda: resolve(k_p=2),
        lambda: resolve("KGW", gamma=0.25),
    )


def scheme_from_settings(tmp: Path) -> Any:
    from waterdrum_hf.schemes.registry import scheme_from_settings as from_settings

    return each(
        lambda: from_settings([("scheme", "kgw")]),  # type: ignore[arg-type]
        lambda: from_settings({"k_p": 1}),
        lambda: from_settings({"scheme": "waterfall", "gamma": 0.5}),
        lambda: from_settings({"scheme": "kgw", "gamma": 0.25, "n_gram": 3}),
    )


def setting_help(tmp: Path) -> Any:
    from waterdrum_hf.schemes.registry import setting_help as help_of

    return each(lambda: help_of("bogus"), lambda: help_of("k_p"))


def watermark_function_terms(tmp: Path) -> Any:
    from waterdrum_hf.schemes.waterfall.function import watermark_function_terms as terms

    cases = [("1", 16), (True, 16), (1.0, 16), (0, 16), (15, 16), (1, 2), (1, 1), (2, 3)]
    cases += [(8, 16), (7, 16), (np.int64(3), 17)]
    return each(*(lambda k=k, n=n: terms(k, n) for k, n in cases))


def waterfall_processor_init(tmp: Path) -> Any:
    from waterdrum_hf.schemes.waterfall.processor import WaterfallLogitsProcessor

    return each(
        lambda: WaterfallLogitsProcessor(16, 1, kappa=-1.0),
        lambda: WaterfallLogitsProcessor(16, 1, kappa=NAN),
        lambda: WaterfallLogitsProcessor(16, 1, kappa=math.inf),
        lambda: WaterfallLogitsProcessor(16, 1, kappa=0).settings(),
    )


def waterfall_post_init(tmp: Path) -> Any:
    from waterdrum_hf import WaterfallScheme

    return each(
        lambda: WaterfallScheme(k_p="1"),  # type: ignore[arg-type]
        lambda: WaterfallScheme(k_p=True),
        lambda: WaterfallScheme(k_p=1.0),  # type: ignore[arg-type]
        lambda: WaterfallScheme(k_p=0),
        lambda: WaterfallScheme(k_p=np.int64(2)).settings(),
    )


def _add_one(x: Any) -> Any:
    return x + 1


def verify_texts(tmp: Path) -> Any:
    """The default scheme, and the scheme named in capitals."""
    from waterdrum_hf import verify_texts as verify

    texts, tokenizer = _texts(3), _tokenizer()
    return each(
        lambda: verify(texts, 5, tokenizer), lambda: verify(texts, 5, tokenizer, scheme="KGW")
    )


def analytic_mean_std(tmp: Path) -> Any:
    """Samples without a countable pair, beside ones with pairs, for every scheme's null."""
    from waterdrum_hf import Verifier
    from waterdrum_hf.schemes import KGWScheme, SynthIDScheme, WaterfallScheme
    from waterdrum_hf.scoring.analytic_null import AnalyticNull

    calls = []
    for scheme in (
        WaterfallScheme(),
        KGWScheme(),
        SynthIDScheme(n_gram=3),
        WaterfallScheme(n_gram=3),
    ):
        verifier = Verifier(_tokenizer(), scheme)
        token_ids = verifier.token_ids([*_texts(2), "", "w4"])
        null = AnalyticNull(
            *verifier.countable_pairs(token_ids),
            len(token_ids),
            scheme.null_moments(verifier.vocab_size),
        )
        for samples in ([2, 3], [0, 2], [0, 1]):
            calls.append(lambda n=null, s=samples: n.mean_std(np.array(s), np.array([0.5, 0.5])))
    return each(*calls)


def seed_points(tmp: Path) -> Any:
    """Comparisons where only the reference has both sets, where a method has them too, and
    without a reference."""
    from waterdrum_hf import SetValue, WaterDrumResult, compare_seeds

    def run(forget: float | None, retain: float | None) -> WaterDrumResult:
        sets = {
            name: SetValue(v)
            for name, v in (("forget", forget), ("retain", retain))
            if v is not None
        }
        return WaterDrumResult(**sets, num_queries=4, num_scored=4, num_skipped=0)

    both, retain_only = [run(0.1, 0.7), run(0.2, 0.6)], [run(None, 0.7), run(None, 0.6)]
    return each(
        lambda: compare_seeds({"retrained": both, "kl": retain_only}).to_dict(),
        lambda: compare_seeds({"retrained": both, "original": both}).to_dict(),
        lambda: compare_seeds({"retrained": both, "kl": both}).to_dict(),
        lambda: compare_seeds({"kl": both, "ga": both}).to_dict(),
    )


def scheme_refusals(tmp: Path) -> Any:
    """Every scheme's refusals whose messages the gate reads as message-only."""
    import torch

    from waterdrum_hf.schemes import EXPEditScheme, SynthIDScheme
    from waterdrum_hf.schemes.its.scheme import ITSWatermark
    from waterdrum_hf.schemes.permutation import full_permutations, permuted_positions
    from waterdrum_hf.schemes.unigram.scheme import UnigramWatermark

    seeds = np.array([[1, 2]])
    unigram = UnigramWatermark()
    writer = unigram.logits_processor(10, [3, 4])
    return each(
        lambda: EXPEditScheme(gamma_edit="x"),  # type: ignore[arg-type]
        lambda: EXPEditScheme(n_gram=3),
        lambda: ITSWatermark(key_length=4).score([50, 60], 7, 10),
        lambda: full_permutations(np.zeros((2, 0), dtype=np.int64), 10),
        lambda: full_permutations(np.array([[-1, 2]]), 10),
        lambda: full_permutations(seeds, 2.5),  # type: ignore[arg-type]
        lambda: permuted_positions(seeds, np.array([1.5]), 10),
        lambda: SynthIDScheme(depth=2.5),  # type: ignore[arg-type]
        lambda: writer(torch.zeros((3, 1), dtype=torch.long), torch.zeros(3, 10)),
        lambda: UnigramWatermark(gamma="x"),  # type: ignore[arg-type]
        lambda: unigram.green_lists([], 10),
        lambda: UnigramWatermark(gamma=0.01).green_size(10),
    )


def synthid_reading(tmp: Path) -> Any:
    """Keys of ids as a list, a 2-D array and uint32; g-values and terms under ids of several
    dtypes, for power-of-two and other table sizes (negative mixed hashes included); the
    analytic null for table sizes 2, 4, 6 and 2**16."""
    from waterdrum_hf.schemes.synthid.scheme import SynthIDScheme, synthid_keys

    rng = np.random.default_rng(2)
    contexts, tokens = rng.integers(0, 200_000, (40, 2)), rng.integers(0, 200_000, 40)
    owners = rng.integers(0, 2**32, 40) % 3 * 12345
    calls: list[Any] = [
        lambda: synthid_keys([0, 7, 2**32 - 1], 3),
        lambda: synthid_keys(np.array([[1, 2]], dtype=np.uint32), 2),
        lambda: synthid_keys(5, 2),
    ]
    for size in (2, 4, 6, 7, 2**16):
        scheme = SynthIDScheme(n_gram=3, depth=3, sampling_table_size=size)
        for ids in (owners, owners.astype(np.uint32), owners.tolist()):
            calls.append(lambda s=scheme, i=ids: s.g_values(i, contexts, tokens))
            calls.append(lambda s=scheme, i=ids: s.token_terms(i, contexts, tokens, 200_000))
        calls.append(lambda s=scheme: type(s.null_moments(1000)).__name__)
    return each(*calls)


def synthid_writer(tmp: Path) -> Any:
    """Two owners over four rows in float32 and bfloat16 scores; rows that cannot be split."""
    import torch

    from waterdrum_hf.schemes.synthid.scheme import SynthIDScheme

    scheme = SynthIDScheme(n_gram=2, depth=3)

    def call(rows: int, dtype: Any) -> Any:
        generator = torch.Generator().manual_seed(rows)
        input_ids = torch.randint(0, 50, (rows, 3), generator=generator)
        scores = torch.randn(rows, 52, generator=generator).to(dtype)
        return scheme.logits_processor(50, [11, 22])(input_ids, scores).float().numpy()

    return each(
        *(lambda d=d: call(4, d) for d in (torch.float32, torch.bfloat16)),
        lambda: call(3, torch.float32),
    )


def exp_edit_jit(tmp: Path) -> Any:
    """What a compiled kernel is (not compiled here: nothing is written to numba's cache)."""
    from waterdrum_hf.schemes.exp_edit.kernel import _jit

    compiled = _jit(_add_one)
    return [type(compiled).__name__, compiled.targetoptions, type(compiled._cache).__name__]


def exp_edit_processor(tmp: Path) -> Any:
    """One id for three rows, two ids for four rows, and two ids for three rows (refused)."""
    import torch

    from waterdrum_hf.schemes.exp_edit.scheme import EXPEditScheme

    scheme = EXPEditScheme(key_length=8)

    def call(ids: Any, rows: int) -> Any:
        processor = scheme.logits_processor(6, ids)
        scores = torch.linspace(-1.0, 1.0, 6 * rows).reshape(rows, 6)
        return processor(torch.zeros((rows, 2), dtype=torch.long), scores).numpy()

    return each(lambda: call(7, 3), lambda: call([7, 8], 4), lambda: call([7, 8], 3))


def exp_edit_costs(tmp: Path) -> Any:
    """Ids as lists, uint64, 2-D, out of the vocabulary, empty and as floats; with blocks and
    without."""
    from waterdrum_hf.schemes.exp_edit.scheme import EXPEditScheme

    texts = [[3, 1, 4, 1, 5], np.array([9, 2, 6], dtype=np.uint64), [], [30, 2], [[1, 2], [3, 4]]]
    keys = np.array([[21, 22]] * len(texts))
    schemes = (EXPEditScheme(key_length=8), EXPEditScheme(key_length=8, block_size=2))
    return each(
        *(lambda s=scheme: s.alignment_costs(texts, keys, 10) for scheme in schemes),
        lambda: schemes[0].alignment_costs([[1.7, 2.2, 3.0]], np.array([[5]]), 10),
    )


def permutation_inputs(tmp: Path) -> Any:
    """Both public functions on seeds and tokens of every integer dtype, with seeds of two and
    of three entries, repeated seeds, and (for the compiled path) enough work for threads."""
    from waterdrum_hf.schemes.permutation import full_permutations, permuted_positions

    calls = []
    for dtype in (np.int8, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        tokens = np.array([0, 5, 9, 5], dtype=dtype)
        for seeds in (
            [[1, 2], [3, 4], [1, 2], [3, 4]],
            [[1, 2, 3], [1, 2, 3], [0, 5, 1], [1, 0, 3]],
        ):
            array = np.array(seeds, dtype=dtype)
            calls.append(lambda a=array, t=tokens: permuted_positions(a, t, 50))
            calls.append(lambda a=array: full_permutations(a, 50))
    big = np.arange(600, dtype=np.int64)[:, None] % 300
    calls.append(lambda: permuted_positions(big, np.arange(600) % 1000, 1000))
    return each(*calls)


def permutation_checks(tmp: Path) -> Any:
    """The seed and token checks: accepted inputs of every integer dtype, then each refusal."""
    return [permutation_inputs(tmp), scheme_refusals(tmp)]


def run_spread(tmp: Path) -> Any:
    """Enough shuffle work for every core: 8 seeds of 70,000 positions (thread_count > 1 on a
    machine with two cores or more)."""
    from waterdrum_hf.schemes.permutation import full_permutations

    return full_permutations(np.arange(8, dtype=np.int64)[:, None], 70_000)


_V = _PKG + "scoring.verification."
_S = _PKG + "schemes."
PROBES = {
    _PKG + "statistics.x__finite_1d": finite_1d,
    _PKG + "statistics.x_calibration_r2": calibration_r2,
    _PKG + "statistics.x_holm_adjusted": holm_adjusted,
    _PKG + "statistics.x_holm_min_null_keys": holm_min_null_keys,
    _PKG + "statistics.x_null_p_value": null_p_value,
    _PKG + "statistics.x_separability_auroc": separability_auroc,
    _PKG + "scoring.seed_comparison.x__finite": finite,
    _PKG + "scoring.seed_comparison.x__points": seed_points,
    _PKG + "scoring.seed_comparison.x__typed_runs": typed_runs,
    _PKG + "scoring.seed_comparison.x_difference_interval": difference_interval,
    _PKG + "bootstrap.x_check_confidence": check_confidence,
    _PKG + "bootstrap.x_check_resamples": check_resamples,
    _PKG + "bootstrap.x_weighted_auroc": weighted_auroc,
    _PKG + "bootstrap.x_bootstrap_replicates": bootstrap_replicates,
    _PKG + "scoring.analytic_null.x_normal_p_value": normal_p_value,
    _PKG + "scoring.analytic_null.xǁAnalyticNullǁ__init__": analytic_null_init,
    _PKG + "scoring.analytic_null.xǁAnalyticNullǁ_distinct_pairs": distinct_pairs,
    _PKG + "config.x__checked_part": checked_part,
    _PKG + "config.x__interval_of_keywords": interval_of_keywords,
    _PKG + "config.x__null_of_keywords": null_of_keywords,
    _PKG + "config.xǁNullConfigǁ__post_init__": null_config_post_init,
    _PKG + "config.xǁWaterDrumConfigǁ__post_init__": config_post_init,
    _PKG + "config.xǁWaterDrumConfigǁfrom_dict": from_dict,
    _PKG + "config.xǁWaterDrumConfigǁfrom_json": from_json,
    _PKG + "config.xǁWaterDrumConfigǁfrom_keywords": from_keywords,
    _PKG + "config.xǁWaterDrumConfigǁto_json": to_json,
    _PKG + "scoring.compute.x__checked_config": checked_config,
    _PKG + "scoring.compute.x_waterdrum_result": waterdrum_result,
    _PKG + "scoring.inputs.x_group_queries": group_queries,
    _PKG + "scoring.inputs.x_owner_display_names": owner_display_names,
    _PKG + "scoring.inputs.x_set_masks": set_masks,
    _PKG + "scoring.inputs.x_warn_skipped": warn_skipped,
    _PKG + "scoring.pooling.x_pool_queries": pool_queries,
    _PKG + "scoring.pooling.x_sample_weights": sample_weights,
    _PKG + "scoring.results.xǁOwnerValueǁfrom_dict": owner_value_from_dict,
    _PKG + "scoring.results.xǁWaterDrumResultǁfrom_dict": result_from_dict,
    _V + "x__nan_reduce": nan_reduce,
    _V + "x_load_tokenizer": load_tokenizer,
    _V + "x_null_reference": null_reference,
    _V + "x_scores_from_sums": scores_from_sums,
    _V + "x_verify_texts": verify_texts,
    _PKG + "scoring.analytic_null.xǁAnalyticNullǁmean_std": analytic_mean_std,
    _V + "xǁVerifierǁ__init__": verifier_init,
    _V + "xǁVerifierǁ_report_unscored": report_unscored,
    _V + "xǁVerifierǁcountable_pairs": countable_pairs,
    _V + "xǁVerifierǁshared_key_sums": shared_key_sums,
    _V + "xǁVerifierǁtoken_ids": token_ids,
    _V + "xǁVerifierǁtoken_sums": token_sums,
    _PKG + "trainers.losses.x__check_beta": check_beta,
    _PKG + "trainers.losses.x__check_shapes": check_shapes,
    _PKG + "trainers.losses.x_sequence_log_prob": sequence_log_prob,
    _PKG + "trainers.losses.x_sequence_nll": sequence_nll,
    _PKG + "trainers.losses.x_simnpo_loss": simnpo_loss,
    _PKG + "trainers.losses.x_token_kl": token_kl,
    _PKG + "trainers.losses.x_token_log_probs": token_log_probs,
    _S + "base.xǁSequenceSchemeǁtoken_terms": sequence_token_terms,
    _S + "base.xǁWatermarkSchemeǁnull_moments": null_moments,
    _S + "kgw.scheme.xǁKGWSchemeǁ__post_init__": kgw_post_init,
    _S + "kgw.scheme.xǁKGWSchemeǁcheck_vocab_size": kgw_check_vocab_size,
    _S + "kgw.scheme.xǁKGWSchemeǁposition_bias": kgw_position_bias,
    _S + "kgw.scheme.xǁKGWSchemeǁposition_terms": kgw_position_terms,
    _S + "permutation_processor.x_checked_row_ids": checked_row_ids,
    _S + "permutation_processor.xǁPermutationLogitsProcessorǁ__call__": processor_call,
    _S + "permutation_processor.xǁPermutationLogitsProcessorǁ__init__": processor_init,
    _S + "permutation_processor.xǁPermutationLogitsProcessorǁ_permutations": permutations,
    _S + "exp_edit.kernel.x__jit": exp_edit_jit,
    _S + "exp_edit.processor.xǁEXPEditLogitsProcessorǁ__call__": exp_edit_processor,
    _S + "exp_edit.scheme.x__in_vocabulary": exp_edit_costs,
    _S + "exp_edit.scheme.xǁEXPEditSchemeǁalignment_costs": exp_edit_costs,
    _S + "mt19937.x_run_spread": run_spread,
    _S + "permutation.x__check_seeds": permutation_checks,
    _S + "permutation.x__check_tokens": permutation_checks,
    **{
        _S + name: scheme_refusals
        for name in (
            "exp_edit.scheme.xǁEXPEditSchemeǁ__post_init__",
            "its.scheme.xǁITSWatermarkǁscore",
            "permutation.x__check_vocab_size",
            "synthid.scheme.xǁSynthIDSchemeǁ__post_init__",
            "unigram.processor.xǁUnigramLogitsProcessorǁ__call__",
            "unigram.scheme.xǁUnigramWatermarkǁ__post_init__",
            "unigram.scheme.xǁUnigramWatermarkǁgreen_lists",
            "unigram.scheme.xǁUnigramWatermarkǁgreen_size",
        )
    },
    _S + "synthid.processor.xǁSynthIDLogitsProcessorǁ__call__": synthid_writer,
    _S + "synthid.scheme.x_synthid_keys": synthid_reading,
    _S + "synthid.scheme.xǁSynthIDSchemeǁ_each_layer": synthid_reading,
    _S + "synthid.scheme.xǁSynthIDSchemeǁnull_moments": synthid_reading,
    **{
        _S + f"permutation.x_{name}": permutation_inputs
        for name in ("_group_rows", "_full_numba", "_positions_numba")
    },
    _S + "registry.x_resolve_scheme": resolve_scheme,
    _S + "registry.x_scheme_from_settings": scheme_from_settings,
    _S + "registry.x_setting_help": setting_help,
    _S + "waterfall.function.x_watermark_function_terms": watermark_function_terms,
    _S + "waterfall.processor.xǁWaterfallLogitsProcessorǁ__init__": waterfall_processor_init,
    _S + "waterfall.scheme.xǁWaterfallSchemeǁ__post_init__": waterfall_post_init,
}
