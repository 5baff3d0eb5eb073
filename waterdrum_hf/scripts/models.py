"""Loading models, tokenizers and watermark ids named on the command line (``tiny``: the
built-in model), with one-line errors for what does not exist."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from waterdrum_hf.keys import read_watermark_ids, watermark_id_from_text
from waterdrum_hf.scripts.parser import CliError
from waterdrum_hf.tiny import NAME as BUILT_IN
from waterdrum_hf.tiny import pretrained_location
from waterdrum_hf.utils.error_text import first_line


def load_tokenizer_option(name: str, what: str = "tokenizer", revision: str | None = None) -> Any:
    """``AutoTokenizer.from_pretrained`` (``tiny``: the built-in model's; ``revision``: a Hub
    id's branch, tag or commit) with a one-line error for a missing path or repo."""
    from transformers import AutoTokenizer

    name = pretrained_location(name, what)
    try:
        return AutoTokenizer.from_pretrained(name, revision=revision)
    except (OSError, ValueError) as error:
        raise CliError(f"could not load the {what} {name!r}: {first_line(error)}") from None


def model_tokenizer(name: str, tokenizer: str | None = None, revision: str | None = None) -> Any:
    """The tokenizer of the model ``name`` (a local folder, a Hub id or ``tiny``), loaded
    without its weights, so that what depends on it is checked before the (slow) weights load:
    ``tokenizer`` where given, else the model folder's own, else a PEFT adapter folder's base
    model's (``adapter_config.json``); ``revision`` for the model's own."""
    if tokenizer is not None:
        return load_tokenizer_option(tokenizer, "tokenizer")
    name = pretrained_location(name, "model")
    folder = Path(name)
    bare = folder.is_dir() and not any(
        (folder / file).is_file() for file in ("tokenizer_config.json", "tokenizer.json")
    )
    if not bare:
        return load_tokenizer_option(name, "model's tokenizer", revision)
    adapter = folder / "adapter_config.json"
    base = json.loads(adapter.read_text(encoding="utf-8")) if adapter.is_file() else {}
    if not isinstance(base, dict) or not base.get("base_model_name_or_path"):
        raise CliError(
            f"the model folder {name!r} has no tokenizer (no tokenizer_config.json): save "
            "the one it was trained with into it (tokenizer.save_pretrained), or give it "
            f"with `waterdrum score --tokenizer` ({BUILT_IN!r} for the built-in model's)"
        )
    return load_tokenizer_option(str(base["base_model_name_or_path"]), "model's tokenizer")


def load_model(name: str) -> Any:
    """A causal LM from a local folder, a Hub id or ``tiny`` (the built-in model), on the GPU
    when there is one; a PEFT adapter folder (``adapter_config.json``) is loaded on its base
    model. Load its tokenizer first (:func:`model_tokenizer`)."""
    from waterdrum_hf.utils.progress import library_progress
    from waterdrum_hf.utils.torch_plumbing import load_causal_lm

    name = pretrained_location(name, "model")
    try:
        with library_progress(None):  # the loading bar on a terminal only
            return load_causal_lm(name)
    except (OSError, ValueError) as error:
        raise CliError(f"could not load the model {name!r}: {first_line(error)}") from None


def watermark_ids(
    values: Sequence[str] | None,
    file: str | None,
    what: str,
    owners: Sequence[int] | None = None,
) -> list[int] | None:
    """Watermark ids from the command line or from a file (one per line; keeps keys off the
    command line and out of shell history). With ``owners`` (each row's owner id), every id
    must own a row: one that owns none is an error that names it by its place (an id is a key,
    never printed)."""
    if values and file:
        raise CliError(f"give {what} on the command line or in a file, not both")
    if file:
        ids = read_watermark_ids(file, what)
    elif values:
        ids = [watermark_id_from_text(v, what) for v in values]
    else:
        return None
    if owners is not None:
        present = set(owners)
        stray = [place for place, key in enumerate(ids, start=1) if key not in present]
        if stray:
            where = f"in {file}" if file else "given"
            raise CliError(
                f"{what}: id number {stray[0]} {where} owns no row of the data"
                + (f" ({len(stray)} ids own none)" if len(stray) > 1 else "")
                + ": is it the right id file for this data?"
            )
    return ids
