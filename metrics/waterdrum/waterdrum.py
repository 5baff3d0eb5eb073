"""WaterDrum: watermark-based, data-centric unlearning metric (an `evaluate` module).

A thin wrapper: all logic lives in ``waterdrum_hf.compute_waterdrum``.
"""

import datasets
import evaluate

from waterdrum_hf.metric import compute_waterdrum

_CITATION = """\
@article{lu2025waterdrum,
  title   = {WaterDrum: Watermark-based Data-centric Unlearning Metric},
  author  = {Lu, Xinyang and Niu, Xinyuan and Lau, Gregory Kang Ruey and Bui, Nhung and
             Sim, Rachael Hwee Ling and Himawan, John Russell and Wen, Fanyu and
             Foo, Chuan-Sheng and Ng, See-Kiong and Low, Bryan Kian Hsiang},
  year    = {2025}
}
@inproceedings{lau2024waterfall,
  title     = {Waterfall: Framework for Robust and Scalable Text Watermarking and Provenance for LLMs},
  author    = {Lau, Gregory Kang Ruey and Niu, Xinyuan and Dao, Hieu and Chen, Jiangwei and
               Foo, Chuan-Sheng and Low, Bryan Kian Hsiang},
  booktitle = {Proceedings of EMNLP},
  year      = {2024}
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
    predictions (`list` of `str`): generated text (the completion only, not the query).
    references (`list` of `int`): watermark id (0..2**32-1) of the owner whose data formed
        each query.
    watermark_tokenizer: tokenizer of the model that watermarked the data (the paraphraser),
        or its name/path. Required.
    forget_ids (`list` of `int`, optional): owners who asked to be forgotten.
    k_p (`int`, default 1), n_gram (`int`, default 2): the watermark's parameters.
    vocab_size (`int`, optional): the watermark's vocabulary size (128000 for the published
        datasets); a tokenizer with another vocab_size raises.
    null_keys (`int`, default 0): also score every set under this many random non-owner keys.
    null_seed (`int`, default 0): seed of those keys.
    return_scores (`bool`, default False): also return the per-sample scores.
Returns:
    forget, retain (or overall without forget_ids): mean per-sample score of each set;
    per_owner: {id: {"mean", "count"}}; separability_auroc: AUROC, retain positive;
    num_scored, num_skipped; missing_forget_ids (if any); null (with null_keys);
    scores (with return_scores).
Examples:
    >>> import waterdrum_hf
    >>> metric = waterdrum_hf.load_metric()
    >>> results = metric.compute(predictions=texts, references=owner_ids,
    ...                          watermark_tokenizer=tokenizer, forget_ids=[19])
    >>> results["forget"], results["retain"], results["separability_auroc"]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class WaterDrum(evaluate.Metric):
    """The WaterDrum unlearning metric."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("int64")}
            ),
            reference_urls=["https://pypi.org/project/waterfall/"],
        )

    def _compute(
        self,
        predictions,
        references,
        watermark_tokenizer=None,
        forget_ids=None,
        k_p=1,
        n_gram=2,
        vocab_size=None,
        null_keys=0,
        null_seed=0,
        return_scores=False,
    ):
        return compute_waterdrum(
            predictions,
            references,
            watermark_tokenizer,
            forget_ids=forget_ids,
            k_p=k_p,
            n_gram=n_gram,
            vocab_size=vocab_size,
            null_keys=null_keys,
            null_seed=null_seed,
            return_scores=return_scores,
        )
