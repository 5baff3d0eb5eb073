"""The unlearning metrics WaterDrum is compared with, each as its authors define it.

The paper's baselines, ROUGE-L recall and MIA (Min-k% Prob, as ``2 * AUROC - 1``), and the
ones unlearning benchmarks report today: the MIA family (LOSS, zlib, Min-k%, Min-k%++),
TOFU's Truth Ratio and Forget Quality, MUSE's KnowMem and open-unlearning's extraction
strength. Each is a pure function of the numbers it is defined on (log-probabilities, token
ids, texts), checked against the peers' published code, plus a function that computes those
numbers from a causal LM and its tokenizer. Unlike WaterDrum, all of them read the evaluated
model's own text space (and most its logits), so they need the retrained model as a reference
to be interpreted (the paper's feasibility desideratum).
"""

from waterdrum_hf.baselines.extraction import extraction_strength, model_extraction_strength
from waterdrum_hf.baselines.forget_quality import forget_quality
from waterdrum_hf.baselines.knowmem import knowmem, knowmem_answers, model_knowmem
from waterdrum_hf.baselines.mia import (
    loss_mia,
    loss_score,
    mia_scores,
    mia_value,
    min_k_percent_prob,
    min_k_percent_score,
    min_k_plus_plus_prob,
    min_k_plus_plus_score,
    zlib_mia,
    zlib_score,
)
from waterdrum_hf.baselines.rouge import rouge_l_recall
from waterdrum_hf.baselines.truth_ratio import (
    aggregate_truth_ratios,
    model_truth_ratio,
    truth_ratio,
)

__all__ = [
    "aggregate_truth_ratios",
    "extraction_strength",
    "forget_quality",
    "knowmem",
    "knowmem_answers",
    "loss_mia",
    "loss_score",
    "mia_scores",
    "mia_value",
    "min_k_percent_prob",
    "min_k_percent_score",
    "min_k_plus_plus_prob",
    "min_k_plus_plus_score",
    "model_extraction_strength",
    "model_knowmem",
    "model_truth_ratio",
    "rouge_l_recall",
    "truth_ratio",
    "zlib_mia",
    "zlib_score",
]
