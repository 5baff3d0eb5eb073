"""Surviving mutants of ``waterdrum_hf/audits/`` judged equivalent, or not checked where only a
GPU tells them apart (read by ``mutation_judged.py``): each entry is ``(function, before, after,
reason[, category])``, as ``mutation_judged.Judged`` takes them."""

from __future__ import annotations

_QUANTIZATION = "waterdrum_hf.audits.quantization."
_RELEARNING = "waterdrum_hf.audits.relearning."
_RUN = "waterdrum_hf.audits.run."
_DEVICE = 'device_map="cuda" if torch.cuda.is_available() else "cpu",'
_CPU_ONLY = (
    "the gate runs on a machine without CUDA, where the original loads the quantized model "
    "with device_map='cpu'; transformers places every weight on the CPU for device_map None "
    "(and when the argument is left out) just as for 'cpu', and sets no hf_device_map for "
    "either; the mutants differ only where torch.cuda.is_available() is True (the model left "
    "on the CPU, or a device named 'XXcudaXX'/'CUDA' refused), which only a GPU run shows"
)
_RMTREE = (
    "output_dir is the folder tempfile.mkdtemp made a few lines above (it exists, is this "
    "process's, mode 0o700), and nothing removes it before the finally clause (save_strategy "
    "'no', the trainer only writes into it); shutil.rmtree deletes such a folder without an "
    "error, so ignore_errors (True, False, None or left out) is never consulted; the probe "
    "reads the folder left empty under each"
)

JUDGED_ENTRIES: tuple[tuple[str | None, ...], ...] = (
    (_QUANTIZATION + "x_quantize", _DEVICE, "device_map=None,", _CPU_ONLY, "not checked"),
    (
        _QUANTIZATION + "x_quantize",
        'device_map="cuda" if torch.cuda.is_available() else "cpu", )',
        ")",
        _CPU_ONLY,
        "not checked",
    ),
    (
        _QUANTIZATION + "x_quantize",
        _DEVICE,
        'device_map="cuda" if (torch.cuda.is_available()) and False else "cpu",',
        _CPU_ONLY,
        "not checked",
    ),
    (
        _QUANTIZATION + "x_quantize",
        _DEVICE,
        'device_map="XXcudaXX" if torch.cuda.is_available() else "cpu",',
        _CPU_ONLY,
        "not checked",
    ),
    (
        _QUANTIZATION + "x_quantize",
        _DEVICE,
        'device_map="CUDA" if torch.cuda.is_available() else "cpu",',
        _CPU_ONLY,
        "not checked",
    ),
    (
        _RELEARNING + "x_relearn",
        "shutil.rmtree(output_dir, ignore_errors=True)",
        "shutil.rmtree(output_dir, ignore_errors=None)",
        _RMTREE,
    ),
    (
        _RELEARNING + "x_relearn",
        "shutil.rmtree(output_dir, ignore_errors=True)",
        "shutil.rmtree(output_dir, )",
        _RMTREE,
    ),
    (
        _RELEARNING + "x_relearn",
        "shutil.rmtree(output_dir, ignore_errors=True)",
        "shutil.rmtree(output_dir, ignore_errors=False)",
        _RMTREE,
    ),
    (
        _RUN + "x__attack_stage",
        'paraphraser = (_loaded(model), tokenizer) if name == "paraphrase" else None',
        'paraphraser = (_loaded(model), tokenizer) if (name == "paraphrase") or True else None',
        "attacks.chain hands the paraphraser only to the paraphrase attack (its inputs table "
        "gives substitution/insertion the tokenizer, copy_paste the source, paraphrase the "
        "(model, tokenizer) pair, and every other attack nothing), so for any other attack the "
        "pair is built and never read; building it loads a folder that the 'before' stage of "
        "the same model already loaded (run_audits runs 'before' first), so it cannot fail "
        "where the original succeeds",
    ),
)
