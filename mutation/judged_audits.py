"""Surviving mutants of ``waterdrum_hf/audits/`` judged equivalent, or not checked where only a
GPU tells them apart (read by ``judged.py``): each entry is ``(function, before, after,
reason[, category])``, as ``judged.Judged`` takes them."""

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

_RETAIN_WEIGHT = (
    "GradDiffConfig inherits retain_weight from UnlearningConfig (trainers/config.py), whose "
    "field default is 1.0: leaving the argument out passes the same float 1.0, so the config, "
    "the loss (1.0 * NLL(retain)) and every weight trained are the same; the probe reads the "
    "weights after two steps"
)
_REPORT_TO = (
    "TrainingArguments' report_to defaults to 'none' in every transformers the package allows "
    "(pyproject: transformers>=5.19; the default changed to 'none' for v5 in "
    "huggingface/transformers#41375, 5.24's training_args.py: default='none'), and "
    "__post_init__ turns 'none' into [] either way; no reporting integration is set up for "
    "either, so the trainer and its weights are the same; the probe reads the weights"
)
_FOUND_GET = (
    "every model of `models` has a stage besides 'before' in `found` when this line runs: "
    "AuditConfig (frozen; replace() re-runs its checks) refuses a config with neither an "
    "audit nor an attack and a quantization audit without widths, so `stages` holds at least "
    "one perturbation or attack; `steps` pairs every model with every stage other than "
    "'before', and each such step sets found[name][audit] (an exception there ends "
    "run_audits before this loop); so found.get(name, ...) always finds the name and its "
    "default ({}, None or left out) is never read; the probe runs an audit with `before` given"
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
    (_RELEARNING + "x_relearn", "retain_weight=1.0,", "", _RETAIN_WEIGHT),
    (_RELEARNING + "x_relearn", 'report_to="none",', "", _REPORT_TO),
    (
        _RUN + "x_run_audits",
        "found[name] = {BEFORE: replace(before[name], scores=None), **found.get(name, {})}",
        "found[name] = {BEFORE: replace(before[name], scores=None), **found.get(name, None)}",
        _FOUND_GET,
    ),
    (
        _RUN + "x_run_audits",
        "found[name] = {BEFORE: replace(before[name], scores=None), **found.get(name, {})}",
        "found[name] = {BEFORE: replace(before[name], scores=None), **found.get(name, )}",
        _FOUND_GET,
    ),
)
