"""Does the unlearning hold? Audits that perturb an unlearned model and score it again.

- Relearning (:mod:`.relearning`): a few fine-tuning steps on a small slice of the forget set.
- Quantization (:mod:`.quantization`): the weights stored in 8 or 4 bits.
- Text attacks (:attr:`AuditConfig.attacks`, :mod:`waterdrum_hf.attacks`): each model's own
  completions edited (e.g. ``deletion:0.2``) before verification: how far the metric holds
  when the text it reads was edited.

Each model is compared with the model retrained without the forget set, put through the same
perturbation (:class:`AuditResults.excess`): a forget value that rises above the retrained
model's after the same steps means the unlearned model still held the data. Run them with
:func:`run_audits` or ``waterdrum audit``; the demo runs both on every method.
"""

from waterdrum_hf.audits.config import AUDITS, QUANTIZATION_BITS, AuditConfig
from waterdrum_hf.audits.quantization import QuantizationCheck, check_backend, quantize
from waterdrum_hf.audits.relearning import relearn, relearning_slice
from waterdrum_hf.audits.results import AUDIT_TITLES, BEFORE, AuditResults, audit_title
from waterdrum_hf.audits.run import AuditQueries, check_audits, run_audits

__all__ = [
    "AUDITS",
    "AUDIT_TITLES",
    "BEFORE",
    "QUANTIZATION_BITS",
    "AuditConfig",
    "AuditQueries",
    "AuditResults",
    "audit_title",
    "QuantizationCheck",
    "check_audits",
    "check_backend",
    "quantize",
    "relearn",
    "relearning_slice",
    "run_audits",
]
