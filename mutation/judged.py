"""Surviving mutants of ``mutation/score.py`` judged equivalent, each with why.

A mutant is named by its function (mutmut's name without ``__mutmut_<n>``, stable while the
function's name is) and the line it changes, so the list survives renumbering; when the line
itself changes, the mutant is new and must be judged again. Judge sparingly: a mutant belongs
here only when no test of the function's documented behaviour can tell it from the original.
"""

from __future__ import annotations

from dataclasses import dataclass

import judged_attacks
import judged_audits
import judged_benchmarks
import judged_data_formats
import judged_hub_results
import judged_report
import judged_token_view

#: The mutant changes nothing any test could observe (the reason is the proof).
EQUIVALENT = "equivalent"
#: The mutant may change behaviour, but not where the gate can see it: only on a GPU (the
#: CUDA tests skip without one), or in code mutmut cannot switch on. Not counted either way.
NOT_CHECKED = "not checked"


@dataclass(frozen=True)
class Judged:
    """Surviving mutants judged, not killed: those of ``function`` (mutmut's name without
    ``__mutmut_<n>``) that change the line ``before`` (stripped) into ``after``, or any of its
    mutants when both are ``None``; why no test can tell them from the original, or why the
    gate cannot check them (``category``)."""

    function: str
    before: str | None
    after: str | None
    reason: str
    category: str = EQUIVALENT


_INPUTS = "waterdrum_hf.scoring.inputs."
_POOLING = "waterdrum_hf.scoring.pooling."
_VERIFICATION = "waterdrum_hf.scoring.verification."
_LOSSES = "waterdrum_hf.trainers.losses."
_ANALYTIC = "waterdrum_hf.scoring.analytic_null."
_BOOTSTRAP = "waterdrum_hf.bootstrap."
_FLAT_INVERSE = (
    "numpy >= 2.0.1 returns this inverse 1-D already, so any reshape to one axis is a no-op; "
    "the reshape keeps numpy 2.0.0 (inverse shaped like the input) right"
)
_SEARCHSORTED_CUTS = (
    "searchsorted cuts only between distinct values, so the order among equal negatives "
    "never reaches a cumulative weight that is read"
)
_TWO_D = "the tensor is 2-D here, so dim +1 is dim -1"
_STABLE = (
    "each text's sums depend only on its own tokens, so any visit order gives the same "
    "result once restored; 'STABLE' is the same sort (numpy reads kind case-insensitively)"
)
_QUERY_INDEX = (
    "the indices are Python ints (len(index)), which numpy makes int64; the list is never "
    "empty (check_texts refuses no predictions)"
)
_FULL_OF_INT = (
    "without a dtype np.full takes it from the fill value, the Python int -1: int64 either way"
)
_ON_GPU = (
    "the device: only a GPU tells; the CUDA test ({}) skips without one, so the gate, run on "
    "CPUs, cannot check it"
)
_PROCESSOR = "waterdrum_hf.schemes.permutation_processor.xǁPermutationLogitsProcessorǁ"
_DEVICE_ON_CPU = (
    "the device of an index or a bias: torch indexes and adds a CPU tensor to scores of any "
    "device the gate has (CPU, and meta, which the tests use to follow devices), so only a GPU "
    "tells, and the gate runs on CPUs"
)
_SAME_LENGTH = (
    "the two sequences have one entry per row by construction (keys and contexts per batch "
    "row; missing seeds and their computed permutations), so zip never meets unequal lengths"
)
_SCHEME_CASE = "scheme names are case-insensitive (resolve_scheme lowercases them)"
_POWER_OF_TWO = (
    "table sizes are at least 2, and for those size & (size - 2) is 0 exactly for powers of "
    "two (an odd size keeps its lowest bit; an even size 2m gives 2 (m & (m - 1)))"
)
_NO_PAIRS = (
    "every scheme's null moments (PositionMoments, SynthIDNull) give a variance of 0.0 for no "
    "pairs, the value the guard returns"
)
_SYNTHID = "waterdrum_hf.schemes.synthid.scheme."
_SYNTHID_PROCESSOR = "waterdrum_hf.schemes.synthid.processor.xǁSynthIDLogitsProcessorǁ"
_ANY_NEGATIVE = "numpy infers the size of an axis given as any negative number, not only -1"
_EXP_EDIT = "waterdrum_hf.schemes.exp_edit.scheme."
_EXP_EDIT_PROCESSOR = "waterdrum_hf.schemes.exp_edit.processor.xǁEXPEditLogitsProcessorǁ"
_UNIQUE_PAIRS = (
    "zip(*pairs) of np.unique's (values, inverse) pairs gives two tuples of one entry per "
    "scored text, so zip never meets unequal lengths"
)
_TOKEN_KL_ON_GPU = _ON_GPU.format(
    "tests/trainers/test_losses.py::test_token_kl_on_the_gpu_equals_the_cpu"
)

JUDGED: tuple[Judged, ...] = (
    *(
        Judged(*entry)
        for module in (
            judged_hub_results,
            judged_data_formats,
            judged_attacks,
            judged_report,
            judged_token_view,
            judged_audits,
            judged_benchmarks,
        )
        for entry in module.JUDGED_ENTRIES
    ),
    *(
        Judged(
            "waterdrum_hf.config.xǁWaterDrumConfigǁto_json",
            'Path(path).write_text(text + "\\n", encoding="utf-8")',
            after,
            "json.dumps escapes every non-ASCII character, so the text is ASCII and every "
            "encoding writes the same bytes",
        )
        for after in (
            'Path(path).write_text(text + "\\n", encoding=None)',
            'Path(path).write_text(text + "\\n", )',
            'Path(path).write_text(text + "\\n", encoding="UTF-8")',
        )
    ),
    *(
        Judged(
            "waterdrum_hf.config.xǁWaterDrumConfigǁfrom_json",
            'text = Path(source).read_text(encoding="utf-8")',
            after,
            "'UTF-8' is the same codec as 'utf-8' (Python reads codec names case-insensitively)",
        )
        for after in ('text = Path(source).read_text(encoding="UTF-8")',)
    ),
    Judged(
        "waterdrum_hf.scoring.verification.x__nan_reduce",
        'warnings.simplefilter("ignore", RuntimeWarning)',
        'warnings.simplefilter("ignore", )',
        "numpy's nan-reductions of a float array warn only RuntimeWarning (empty slice, "
        "degrees of freedom), so ignoring every category ignores the same warnings",
    ),
    Judged(
        "waterdrum_hf.scoring.results.x__part",
        None,
        None,
        "runs only while the class body is executed at import, before mutmut switches a "
        "mutant on: mutmut 3 cannot switch it (a wrong tag breaks every result test)",
        NOT_CHECKED,
    ),
    Judged(
        _POOLING + "x_pool_queries",
        'with np.errstate(invalid="ignore", divide="ignore"):',
        'with np.errstate(invalid="ignore", divide=None):',
        "a query without counted tokens or scored samples has total 0, so its 0/0 raises "
        "'invalid', never 'divide' (the invalid mutants are killed)",
    ),
    Judged(
        _POOLING + "x_pool_queries",
        'with np.errstate(invalid="ignore", divide="ignore"):',
        'with np.errstate(invalid="ignore", ):',
        "as above: 0/0 is 'invalid', never 'divide'",
    ),
    *(
        Judged(
            _VERIFICATION + function,
            'scheme: str | WatermarkScheme = "waterfall",',
            'scheme: str | WatermarkScheme = "WATERFALL",',
            _SCHEME_CASE,
        )
        for function in ("xǁVerifierǁ__init__", "x_null_reference", "x_verify_texts")
    ),
    Judged(
        "waterdrum_hf.schemes.registry.x_resolve_scheme",
        'def resolve_scheme(scheme: str | WatermarkScheme = "waterfall", **settings: Any) -> WatermarkScheme:',
        'def resolve_scheme(scheme: str | WatermarkScheme = "WATERFALL", **settings: Any) -> WatermarkScheme:',
        _SCHEME_CASE,
    ),
    *(
        Judged(_INPUTS + "x_group_queries", before, after, reason)
        for before, after, reason in [
            (
                "sample_query = np.array([index.setdefault(q, len(index)) for q in query_ids], dtype=np.int64)",
                "sample_query = np.array([index.setdefault(q, len(index)) for q in query_ids], dtype=None)",
                _QUERY_INDEX,
            ),
            (
                "sample_query = np.array([index.setdefault(q, len(index)) for q in query_ids], dtype=np.int64)",
                "sample_query = np.array([index.setdefault(q, len(index)) for q in query_ids], )",
                _QUERY_INDEX,
            ),
            (
                "watermark_ids = np.full(len(index), -1, dtype=np.int64)",
                "watermark_ids = np.full(len(index), -1, dtype=None)",
                _FULL_OF_INT,
            ),
            (
                "watermark_ids = np.full(len(index), -1, dtype=np.int64)",
                "watermark_ids = np.full(len(index), -1, )",
                _FULL_OF_INT,
            ),
            (
                "watermark_ids = np.full(len(index), -1, dtype=np.int64)",
                "watermark_ids = np.full(len(index), +1, dtype=np.int64)",
                "a placeholder: every query has a sample, so the next line overwrites all of it",
            ),
            (
                "watermark_ids = np.full(len(index), -1, dtype=np.int64)",
                "watermark_ids = np.full(len(index), -2, dtype=np.int64)",
                "a placeholder: every query has a sample, so the next line overwrites all of it",
            ),
        ]
    ),
    *(
        Judged(_VERIFICATION + "xǁVerifierǁcountable_pairs", before, after, reason)
        for before, after, reason in [
            (
                "arrays = [np.asarray(ids, dtype=np.int64).reshape(-1) for ids in token_ids]",
                "arrays = [np.asarray(ids, dtype=np.int64).reshape(-2) for ids in token_ids]",
                "numpy reads any negative size as 'the rest', like -1",
            ),
            (
                "flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)",
                "flat = np.concatenate(arrays) if arrays else np.zeros(1, dtype=np.int64)",
                "no texts: one placeholder id broadcast against no text offsets gives no pairs",
            ),
        ]
    ),
    Judged(
        _VERIFICATION + "x_scores_from_sums",
        'with np.errstate(invalid="ignore", divide="ignore"):',
        'with np.errstate(invalid="ignore", divide=None):',
        "a text without counted tokens has sum 0: its 0/0 is 'invalid', never 'divide'",
    ),
    Judged(
        _VERIFICATION + "x_scores_from_sums",
        'with np.errstate(invalid="ignore", divide="ignore"):',
        'with np.errstate(invalid="ignore", ):',
        "as above",
    ),
    *(
        Judged(_VERIFICATION + "xǁVerifierǁtoken_sums", before, after, _STABLE)
        for before, after in [
            (
                'order = np.argsort(watermark_ids[:, 0], kind="stable")',
                "order = np.argsort(watermark_ids[:, 0], kind=None)",
            ),
            (
                'order = np.argsort(watermark_ids[:, 0], kind="stable")',
                "order = np.argsort(watermark_ids[:, 0], )",
            ),
            (
                'order = np.argsort(watermark_ids[:, 0], kind="stable")',
                'order = np.argsort(watermark_ids[:, 0], kind="STABLE")',
            ),
            (
                'restore = np.argsort(order, kind="stable")',
                "restore = np.argsort(order, kind=None)",
            ),
            ('restore = np.argsort(order, kind="stable")', "restore = np.argsort(order, )"),
            (
                'restore = np.argsort(order, kind="stable")',
                'restore = np.argsort(order, kind="STABLE")',
            ),
        ]
    ),
    Judged(
        "waterdrum_hf.schemes.kgw.scheme.xǁKGWSchemeǁcheck_vocab_size",
        "if not 1 <= self.green_size(vocab_size) <= vocab_size - 1:",
        "if not 1 <= self.green_size(vocab_size) <= vocab_size + 1:",
        "gamma < 1 keeps floor(gamma * N) <= N - 1, so the upper bound never binds",
    ),
    Judged(
        "waterdrum_hf.schemes.kgw.scheme.xǁKGWSchemeǁposition_terms",
        "green = (np.asarray(positions) < self.green_size(vocab_size)).astype(np.float64)",
        "green = (np.asarray(positions) < self.green_size(vocab_size)).astype(None)",
        "astype(None) is astype(float64)",
    ),
    *(
        Judged(_LOSSES + function, before, before.replace("dim=-1", "dim=+1"), _TWO_D)
        for function, before in [
            ("x_sequence_log_prob", "return token_log_probs(logits, labels)[0].sum(dim=-1)"),
            ("x_sequence_nll", "total = -log_probs.sum(dim=-1)"),
            (
                "x_sequence_nll",
                'return total if reduction == "sum" else total / mask.sum(dim=-1).clamp(min=1)',
            ),
            ("x_token_kl", "ref_log_p = F.log_softmax(ref_logits[:, :-1][mask].float(), dim=-1)"),
            ("x_token_kl", "log_p = F.log_softmax(logits[:, :-1][mask].float(), dim=-1)"),
            (
                "x_token_kl",
                'per_token = F.kl_div(log_p, ref_log_p, reduction="none", log_target=True).sum(dim=-1)',
            ),
            ("x_token_kl", "return totals / mask.sum(dim=-1).clamp(min=1)"),
        ]
    ),
    *(
        Judged(
            _LOSSES + "x_token_kl",
            "totals = torch.zeros(labels.shape[0], device=per_token.device, dtype=per_token.dtype)",
            after,
            reason,
            category,
        )
        for after, reason, category in [
            (
                "totals = torch.zeros(labels.shape[0], device=None, dtype=per_token.dtype)",
                _TOKEN_KL_ON_GPU,
                NOT_CHECKED,
            ),
            (
                "totals = torch.zeros(labels.shape[0], dtype=per_token.dtype)",
                _TOKEN_KL_ON_GPU,
                NOT_CHECKED,
            ),
        ]
    ),
    *(
        Judged(_ANALYTIC + "xǁAnalyticNullǁ__init__", before, after, reason)
        for before, after, reason in [
            (
                "counts = np.bincount(np.asarray(sample_of, np.int64), minlength=num_samples)",
                f"counts = np.bincount(np.asarray(sample_of, {after}), minlength=num_samples)",
                "sample_of holds integer sample indices (countable_pairs' int64); bincount "
                "counts any integer dtype the same",
            )
            for after in ("None", "")
        ]
        + [
            (
                "context_id, self._context_rows = inverse.reshape(-1), rows",
                f"context_id, self._context_rows = inverse.reshape({shape}), rows",
                _FLAT_INVERSE,
            )
            for shape in ("None", "-2")
        ]
    ),
    *(
        Judged(_ANALYTIC + "xǁAnalyticNullǁ_distinct_pairs", before, after, _FLAT_INVERSE)
        for before, after in [
            (
                "pair_weights = np.bincount(which.reshape(-1), weights=np.repeat(weights, lengths))",
                f"pair_weights = np.bincount(which.reshape({shape}), weights=np.repeat(weights, lengths))",
            )
            for shape in ("None", "-2")
        ]
    ),
    *(
        Judged(
            _BOOTSTRAP + "x_bootstrap_replicates",
            "values = np.asarray(values, dtype=np.float64)",
            after,
            "int64 multiplicities times values of any real dtype promote to float64 (or exact "
            "integers), the same numbers as converting first; the AUROC only compares values",
        )
        for after in ("values = np.asarray(values, dtype=None)", "values = np.asarray(values, )")
    ),
    *(
        Judged(
            _BOOTSTRAP + "x_weighted_auroc",
            'order = np.argsort(negative, kind="stable")',
            after,
            _SEARCHSORTED_CUTS,
        )
        for after in (
            "order = np.argsort(negative, kind=None)",
            "order = np.argsort(negative, )",
            'order = np.argsort(negative, kind="STABLE")',
        )
    ),
    Judged(
        _BOOTSTRAP + "x_weighted_auroc",
        'lower = below[:, np.searchsorted(sorted_negative, positive, side="left")]',
        "lower = below[:, np.searchsorted(sorted_negative, positive, )]",
        "side='left' is searchsorted's default; it is spelt out beside side='right'",
    ),
    *(
        Judged(
            _POOLING + "x_sample_weights",
            f"per_query = np.bincount(index, weights={w}, minlength=num_queries)",
            f"per_query = np.bincount(index, weights={w}, )",
            "per_query is read only at index, the samples' own queries, all below its length "
            "with or without minlength",
        )
        for w in ("counts", "scored")
    ),
    *(
        Judged(
            _VERIFICATION + "xǁVerifierǁshared_key_sums",
            "keys = np.asarray(keys, dtype=np.int64).reshape(-1)",
            after,
            "keys arrive as a 1-D int64 array (null_reference_of_token_ids draws them), so "
            "neither the conversion nor the reshape changes them",
        )
        for after in (
            "keys = np.asarray(keys, dtype=None).reshape(-1)",
            "keys = np.asarray(keys, ).reshape(-1)",
            "keys = np.asarray(keys, dtype=np.int64).reshape(-2)",
        )
    ),
    *(
        Judged(
            _VERIFICATION + "xǁVerifierǁshared_key_sums",
            "which = which.reshape(-1)",
            f"which = which.reshape({shape})",
            _FLAT_INVERSE,
        )
        for shape in ("None", "-2")
    ),
    *(
        Judged(
            _PROCESSOR + "__call__",
            "bias = self._bias.to(device=scores.device, dtype=scores.dtype)",
            after,
            _ON_GPU.format("tests/schemes/test_processor.py::test_the_bias_is_added_on_the_gpu"),
            NOT_CHECKED,
        )
        for after in (
            "bias = self._bias.to(device=None, dtype=scores.dtype)",
            "bias = self._bias.to(dtype=scores.dtype)",
        )
    ),
    *(
        Judged(f"waterdrum_hf.schemes.{function}", before, after, _DEVICE_ON_CPU, NOT_CHECKED)
        for function, before, after in (
            (
                "its.processor.xǁITSLogitsProcessorǁ__call__",
                "order = self._order.to(scores.device)",
                "order = self._order.to(None)",
            ),
            *(
                (
                    "its.processor.xǁITSLogitsProcessorǁ__call__",
                    "out[torch.arange(rows, device=scores.device), order[rank]] = 0.0",
                    after,
                )
                for after in (
                    "out[torch.arange(rows, device=None), order[rank]] = 0.0",
                    "out[torch.arange(rows, ), order[rank]] = 0.0",
                )
            ),
            *(
                (
                    "unigram.processor.xǁUnigramLogitsProcessorǁ__call__",
                    "bias = self._bias.to(device=scores.device, dtype=scores.dtype)",
                    after,
                )
                for after in (
                    "bias = self._bias.to(device=None, dtype=scores.dtype)",
                    "bias = self._bias.to(dtype=scores.dtype)",
                )
            ),
        )
    ),
    Judged(
        _SYNTHID_PROCESSOR + "__call__",
        "updated[selected] = processor(input_ids[selected], scores[selected]).to(scores.dtype)",
        "updated[selected] = processor(input_ids[selected], scores[selected]).to(None)",
        "updated is a clone of scores: assigning rows into it casts them to scores' dtype, "
        "whatever dtype the processor returns",
    ),
    *(
        Judged(_SYNTHID_PROCESSOR + "__call__", before, after, _DEVICE_ON_CPU, NOT_CHECKED)
        for before, after in (
            *(
                (
                    "selected = torch.as_tensor(np.flatnonzero(row_ids == owner), device=scores.device)",
                    after,
                )
                for after in (
                    "selected = torch.as_tensor(np.flatnonzero(row_ids == owner), device=None)",
                    "selected = torch.as_tensor(np.flatnonzero(row_ids == owner), )",
                )
            ),
            ("device=scores.device,", "device=None,"),
        )
    ),
    Judged(
        _SYNTHID + "x_synthid_keys",
        "ids = np.atleast_1d(np.asarray(watermark_ids)).reshape(-1)",
        "ids = np.atleast_1d(np.asarray(watermark_ids)).reshape(-2)",
        _ANY_NEGATIVE,
    ),
    *(
        Judged(_SYNTHID + "xǁSynthIDSchemeǁ_each_layer", before, after, reason)
        for before, after, reason in (
            *(
                (
                    "distinct, which = np.unique(np.asarray(watermark_ids, np.int64), return_inverse=True)",
                    f"distinct, which = np.unique(np.asarray(watermark_ids, {dtype}), return_inverse=True)",
                    "the ids reach nothing but self.keys, which reads them as Python ints "
                    "(tolist()) to check and derive the keys: any integer dtype gives the same keys",
                )
                for dtype in ("None", "")
            ),
            *(
                (
                    "keys = self.keys(distinct)[which.reshape(-1)]",
                    f"keys = self.keys(distinct)[which.reshape({shape})]",
                    _FLAT_INVERSE,
                )
                for shape in ("None", "-2")
            ),
            *(
                (
                    "yield table[mixed & (size - 1) if size & (size - 1) == 0 else np.mod(mixed, size)]",
                    after,
                    "for a power-of-two size, mixed & (size - 1) is the floor modulo of mixed, "
                    "negative mixed included (two's complement), which np.mod computes too: "
                    "taking np.mod for a power of two gives the same index",
                )
                for after in (
                    "yield table[mixed & (size - 1) if (size & (size - 1) == 0) and False else np.mod(mixed, size)]",
                    "yield table[mixed & (size - 1) if size | (size - 1) == 0 else np.mod(mixed, size)]",
                    "yield table[mixed & (size - 1) if size & (size - 1) == 1 else np.mod(mixed, size)]",
                )
            ),
        )
    ),
    *(
        Judged(
            _SYNTHID + function,
            before,
            before.replace("size & (size - 1)", "size & (size - 2)"),
            _POWER_OF_TWO,
        )
        for function, before in (
            ("xǁSynthIDSchemeǁnull_moments", "if size & (size - 1):"),
            (
                "xǁSynthIDSchemeǁ_each_layer",
                "yield table[mixed & (size - 1) if size & (size - 1) == 0 else np.mod(mixed, size)]",
            ),
        )
    ),
    Judged(
        _ANALYTIC + "xǁAnalyticNullǁmean_std",
        "variance = self.moments.sum_variance(pair_weights, contexts, tokens) if len(pairs) else 0.0",
        "variance = self.moments.sum_variance(pair_weights, contexts, tokens) if (len(pairs)) or True else 0.0",
        _NO_PAIRS,
    ),
    Judged(
        "waterdrum_hf.scoring.seed_comparison.x__points",
        "return points if reference in points and len(points) > 1 else {}",
        "return points if reference in points and len(points) >= 1 else {}",
        "with the reference's points alone, the distances (every point but the reference's) "
        "are none either way, and without distances there is no closest method",
    ),
    Judged(
        "waterdrum_hf.schemes.exp_edit.kernel.x__jit",
        "return cast(F, numba.njit(cache=True, nogil=True)(function))  # called as the function is",
        "return cast(None, numba.njit(cache=True, nogil=True)(function))  # called as the function is",
        "typing.cast returns its value unchanged, whatever type it names",
    ),
    *(
        Judged(_EXP_EDIT_PROCESSOR + "__call__", before, after, _DEVICE_ON_CPU, NOT_CHECKED)
        for before, after in (
            (
                "race = torch.from_numpy(np.log(uniforms)).to(probs.device) / probs",
                "race = torch.from_numpy(np.log(uniforms)).to(None) / probs",
            ),
            *(
                ("out[torch.arange(rows, device=scores.device), chosen] = 0.0", after)
                for after in (
                    "out[torch.arange(rows, device=None), chosen] = 0.0",
                    "out[torch.arange(rows, ), chosen] = 0.0",
                )
            ),
        )
    ),
    *(
        Judged(
            _EXP_EDIT + "x__in_vocabulary",
            "array = np.asarray(ids, dtype=np.int64)",
            after,
            "the kept ids reach the kernel only through np.unique and np.concatenate, whose "
            "dtype may then be uint64 or float64 (exact below 2**53, and every kept id is below "
            "vocab_size); the kernel turns each into np.uint64(token) for the key stream",
        )
        for after in ("array = np.asarray(ids, dtype=None)", "array = np.asarray(ids, )")
    ),
    *(
        Judged(_EXP_EDIT + "xǁEXPEditSchemeǁalignment_costs", before, after, reason)
        for before, after, reason in (
            *(
                (
                    "*(np.unique(kept[i], return_inverse=True) for i in scored), strict=True",
                    "*(np.unique(kept[i], return_inverse=True) for i in scored), strict=" + strict,
                    _UNIQUE_PAIRS,
                )
                for strict in ("None", "False")
            ),
            (
                "*(np.unique(kept[i], return_inverse=True) for i in scored), strict=True )",
                "*(np.unique(kept[i], return_inverse=True) for i in scored), )",
                _UNIQUE_PAIRS,
            ),
            *(
                (
                    "cells = self.key_length * int(np.mean(counts[scored])) ** 2",
                    after,
                    "cells only sizes the work for run_spread's thread count; each job writes "
                    "its own cost, so any number of threads gives the same costs",
                )
                for after in (
                    "cells = self.key_length / int(np.mean(counts[scored])) ** 2",
                    "cells = self.key_length * int(np.mean(counts[scored])) * 2",
                    "cells = self.key_length * int(np.mean(counts[scored])) ** 3",
                )
            ),
        )
    ),
    *(
        Judged(f"waterdrum_hf.schemes.permutation.x_{function}", before, after, reason)
        for function, before, after, reason in (
            *(
                (
                    function,
                    'if array.dtype.kind not in "iu":',
                    'if array.dtype.kind not in "XXiuXX":',
                    "a dtype's kind is one lower-case letter (b, i, u, f, c, m, M, O, S, U, V), so "
                    "only i and u are in either string",
                )
                for function in ("_check_seeds", "_check_tokens")
            ),
            *(
                (
                    "_check_seeds",
                    "return np.ascontiguousarray(array, dtype=np.int64)",
                    after,
                    "the seeds' dtype goes no further than the grouping (which packs them as "
                    "uint64 or sorts them) and the kernels (which take them as uint32, or as "
                    "Python ints in numpy's path), so any integer dtype in range gives the same "
                    "permutations",
                )
                for after in (
                    "return np.ascontiguousarray(array, dtype=None)",
                    "return np.ascontiguousarray(array, )",
                )
            ),
            *(
                (
                    "_check_tokens",
                    "return array.astype(np.int64, copy=False)",
                    f"return array.astype(np.int64, {copy})",
                    "the tokens are only read (indexed), never written, so whether the int64 "
                    "array is a copy changes nothing",
                )
                for copy in ("copy=None", "", "copy=True")
            ),
            *(
                (
                    "_group_rows",
                    'order = np.argsort(packed, kind="stable")',
                    after,
                    "the rows of one group hold the same seed, so the order of the rows within "
                    "a group (the only thing a sort's stability decides) changes no output; "
                    "'STABLE' is the same sort (numpy reads kind case-insensitively)",
                )
                for after in (
                    "order = np.argsort(packed, kind=None)",
                    "order = np.argsort(packed, )",
                    'order = np.argsort(packed, kind="STABLE")',
                )
            ),
            *(
                (
                    function,
                    before,
                    before.replace("np.uint32", "None"),
                    "astype(None) gives float64, which holds every seed in 0..2**32-1 exactly, "
                    "and the kernel reads each entry as np.int64(key[j]): the same state, the "
                    "same permutation (numba compiles a float64 version once more)",
                )
                for function, before in (
                    (
                        "_full_numba",
                        "run_spread(full_kernel, len(unique), vocab_size, unique.astype(np.uint32), out)",
                    ),
                    ("_positions_numba", "unique.astype(np.uint32),"),
                )
            ),
        )
    ),
    *(
        Judged(
            "waterdrum_hf.schemes.mt19937.x_run_spread",
            'with ThreadPoolExecutor(threads, thread_name_prefix="waterdrum-permutation") as pool:',
            after,
            "exactly `threads` tasks are submitted, and an executor starts at most one worker "
            "per task, so its default maximum (min(32, cores + 4), above `threads`, which is at "
            "most the cores) runs them on as many workers as `threads` does; each task writes "
            "its own rows",
        )
        for after in (
            'with ThreadPoolExecutor(None, thread_name_prefix="waterdrum-permutation") as pool:',
            'with ThreadPoolExecutor(thread_name_prefix="waterdrum-permutation") as pool:',
        )
    ),
    *(
        Judged(
            function,
            f"{name} = np.repeat({ids}, rows // len({ids}))",
            f"{name} = np.repeat({ids}, rows / len({ids}))",
            "rows is a multiple of the ids (checked just above), so the quotient is an exact "
            "float that np.repeat takes as the same count",
        )
        for function, name, ids in (
            (_PROCESSOR + "__call__", "keys", "self._watermark_ids"),
            (_EXP_EDIT_PROCESSOR + "__call__", "keys", "self._ids"),
            (_SYNTHID_PROCESSOR + "__call__", "row_ids", "self._watermark_ids"),
        )
    ),
    *(
        Judged(_PROCESSOR + "_permutations", before, after, _SAME_LENGTH)
        for before in (
            "for key, context in zip(keys, contexts, strict=True)",
            "for seed, permutation in zip(missing, computed, strict=True):",
        )
        for after in (
            before.replace("strict=True", "strict=None"),
            before.replace(", strict=True", ", "),
            before.replace("strict=True", "strict=False"),
        )
    ),
    *(
        Judged(
            _PROCESSOR + "_permutations",
            "full_permutations(np.array(missing, dtype=np.int64), self.vocab_size)",
            after,
            "missing holds tuples of Python ints in 0..2**32-1, which numpy reads as int64 anyway",
        )
        for after in (
            "full_permutations(np.array(missing, dtype=None), self.vocab_size)",
            "full_permutations(np.array(missing, ), self.vocab_size)",
        )
    ),
    Judged(
        _PROCESSOR + "_permutations",
        "self._cache.popitem(last=False)",
        "self._cache.popitem(last=None)",
        "OrderedDict.popitem reads last by truth value, and None is false",
    ),
)
