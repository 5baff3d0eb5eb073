"""WaterDrum: watermark-based, data-centric unlearning metric (an `evaluate` module).

A thin wrapper: all logic lives in ``waterdrum_hf.waterdrum_metrics``. Scoring settings come
as flat keyword arguments here, as ``evaluate`` modules take them, and are mapped to a
``waterdrum_hf.WaterDrumConfig`` in one place (``WaterDrumConfig.from_keywords``).
"""

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import datasets
import evaluate

from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.scoring import waterdrum_metrics
from waterdrum_hf.tiny import pretrained_location

_CITATION = """\
@inproceedings{lu2026waterdrum,
  title     = {WaterDrum: Watermark-based Data-centric Unlearning Metric},
  author    = {Lu, Xinyang and Niu, Xinyuan and Lau, Gregory Kang Ruey and Bui, Nhung and
               Sim, Rachael Hwee Ling and Himawan, John Russell and Wen, Fanyu and
               Foo, Chuan-Sheng and Ng, See-Kiong and Low, Bryan Kian Hsiang},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2026}
}
@inproceedings{lau2024waterfall,
  title     = {Waterfall: Scalable Framework for Robust Text Watermarking and Provenance for {LLM}s},
  author    = {Lau, Gregory Kang Ruey and Niu, Xinyuan and Dao, Hieu and Chen, Jiangwei and
               Foo, Chuan-Sheng and Low, Bryan Kian Hsiang},
  booktitle = {Proceedings of the 2024 Conference on Empirical Methods in Natural Language
               Processing},
  pages     = {20432--20466},
  year      = {2024},
  doi       = {10.18653/v1/2024.emnlp-main.1138}
}
"""

_DESCRIPTION = """\
WaterDrum measures how much of each data owner's (Waterfall-watermarked) data still shows in a
model, from the model's generated text alone. Each prediction is a generation for a query built
from one owner's data; it is verified with that owner's watermark key. The forget value should
fall to ~0 after perfect unlearning while the retain value stays where it was.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`, or `list` of `list` of `str`): generated text (the
        completion only, not the query): one per query, or the samples of each query (what
        `waterdrum_hf.generate` returns).
    references (`list` of `int`): watermark id (0..2**32-1) of the owner behind each query.
    watermark_tokenizer: tokenizer of the model that watermarked the data (the paraphraser),
        or its name/path. Required.
    forget_ids (`list` of `int`, optional): owners who asked to be forgotten.
    owner_names (`dict` int -> str, optional): display names of the owners in `per_owner`
        (default `owner-1`, `owner-2`, ... by first appearance).
    query_ids (`list`, optional): with flat predictions, the query each sample answers.
    pooling (`str`, default "tokens"): how a query pools its samples: "tokens" (token-weighted,
        the paper's) or "mean".
    k_p (`int`, default 1), n_gram (`int`, default: the scheme's, 2): the watermark's
        parameters (k_p is Waterfall's).
    scheme (`str`, default "waterfall"): the watermark scheme, "waterfall", "kgw", "synthid"
        or "exp_edit" (any name of `waterdrum_hf.schemes.SCHEMES`).
    gamma (`float`, default 0.5): KGW's green share (with scheme="kgw").
    depth (`int`, default 30), sampling_table_size (`int`, default 65536),
        sampling_table_seed (`int`, default 0): Synth-ID's settings (with scheme="synthid";
        its n_gram defaults to 5). Its score is the mean g-value: 0.5 without the watermark.
    key_length (`int`, default 256), gamma_edit (`float`, default 0.0), block_size (`int`,
        default: the whole text): EXP-edit's settings (with scheme="exp_edit"). Its score is
        minus the edit-distance alignment cost per token, well above 0 without the watermark:
        read it with the empirical null (null_keys=K); the analytic null refuses it.
    vocab_size (`int`, optional): the watermark's vocabulary size (128000 for the published
        datasets); a tokenizer with another vocab_size raises.
    null (`str`, optional): "analytic" (exact null mean/std from the token-pair counts,
        normal-approximation p-value, a few percent of the scoring; the default), "empirical"
        (random keys; the default with null_keys > 0) or "none": each set's null mean/std, z
        and p-value.
    null_keys (`int`, default 0): also score every query under this many random non-owner
        keys and give each set its null mean/std, z and p-value (the empirical null).
    null_seed (`int`, default 0): seed of those keys.
    return_details (`bool`, default False): add per_owner, per-sample scores and per-query
        values. With a null each per_owner entry has its p_value and its adjusted_p_value
        (Holm over the owners of its set): read owners one by one with the adjusted one.
    return_scores (`bool`, default False): add the per-sample scores only.
    confidence (`float`, optional, e.g. 0.95): add confidence intervals at this level: a
        percentile bootstrap over queries, resampled within each owner (off by default).
    bootstrap_resamples (`int`, default 1000): resamples of that bootstrap (at least 100).
    bootstrap_seed (`int`, default 0): its seed; the same call gives the same interval.
Returns:
    Flat scalars: forget, retain (or overall without forget_ids): mean per-query value of each
    set; separability_auroc (retain positive); num_queries; num_scored, num_skipped (samples);
    num_missing_forget_ids (if any); with a null <set>_null_mean, <set>_null_std, <set>_z,
    <set>_p_value; with confidence <set>_ci_low, <set>_ci_high,
    separability_auroc_ci_low, separability_auroc_ci_high and confidence (and ci_low, ci_high
    per owner in per_owner). A value that cannot be computed is left out, never None.
Examples:
    >>> import waterdrum_hf
    >>> metric = waterdrum_hf.load_metric()
    >>> completions = waterdrum_hf.generate(model, tokenizer, queries, num_samples=10)
    >>> results = metric.compute(predictions=completions, references=owner_id_per_query,
    ...                          watermark_tokenizer=paraphraser_tokenizer, forget_ids=[19])
    >>> results["forget"], results["retain"], results["separability_auroc"]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Waterdrum(evaluate.Metric):
    """The WaterDrum unlearning metric (class name spelled so the module is named `waterdrum`)."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Sequence(datasets.Value("string")),
                        "references": datasets.Value("int64"),
                    }
                ),
                datasets.Features(
                    {"predictions": datasets.Value("string"), "references": datasets.Value("int64")}
                ),
            ],
            reference_urls=["https://pypi.org/project/waterfall/"],
        )

    def _compute(
        self,
        predictions: Sequence[str] | Sequence[Sequence[str]],
        references: Sequence[int],
        watermark_tokenizer: Any = None,
        forget_ids: Sequence[int] | None = None,
        owner_names: Mapping[int, str] | None = None,
        query_ids: Sequence[Hashable] | None = None,
        return_details: bool = False,
        return_scores: bool = False,
        **settings: Any,
    ) -> dict[str, Any]:
        if isinstance(watermark_tokenizer, str):  # "tiny": the built-in model's
            watermark_tokenizer = pretrained_location(watermark_tokenizer, "watermark_tokenizer")
        return waterdrum_metrics(
            predictions,
            references,
            watermark_tokenizer,
            config=WaterDrumConfig.from_keywords(settings),
            forget_ids=forget_ids,
            owner_names=owner_names,
            query_ids=query_ids,
            return_details=return_details,
            return_scores=return_scores,
        )
