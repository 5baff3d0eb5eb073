"""Watermark schemes: what the writer (watermarking) and the reader (verification) share.

Each scheme implements :class:`WatermarkScheme`; Waterfall is the default, adapted KGW
(:class:`KGWScheme`) the second; EXP-edit (:class:`EXPEditScheme`) reads whole sequences
(a :class:`SequenceScheme`). :class:`UnigramWatermark` (Zhao et al., 2023) is a writer
only, and :class:`ITSWatermark` (Kuditipudi et al., 2023) a writer with its one-key test: the
model owner's own watermarks in the dilution study.
"""

from waterdrum_hf.schemes.base import PermutationScheme, SequenceScheme, WatermarkScheme
from waterdrum_hf.schemes.exp_edit.scheme import EXPEditScheme
from waterdrum_hf.schemes.its.scheme import ITSWatermark
from waterdrum_hf.schemes.kgw.scheme import KGWScheme, kgw_z_score
from waterdrum_hf.schemes.registry import SCHEMES, resolve_scheme, scheme_from_settings
from waterdrum_hf.schemes.synthid.scheme import SynthIDScheme, synthid_keys
from waterdrum_hf.schemes.unigram.scheme import UnigramWatermark
from waterdrum_hf.schemes.waterfall.scheme import WaterfallScheme

__all__ = [
    "SCHEMES",
    "EXPEditScheme",
    "ITSWatermark",
    "KGWScheme",
    "PermutationScheme",
    "SynthIDScheme",
    "SequenceScheme",
    "UnigramWatermark",
    "WatermarkScheme",
    "WaterfallScheme",
    "kgw_z_score",
    "resolve_scheme",
    "scheme_from_settings",
    "synthid_keys",
]
