"""Surviving mutants of ``waterdrum_hf/hub_results/publish.py`` judged equivalent (read by
``judged.py``): each entry is ``(function, before, after, reason)``, as
``judged.Judged`` takes them."""

from __future__ import annotations

_MODULE = "waterdrum_hf.hub_results.publish."
_PUSH = _MODULE + "x_push_hub_results"
_WRITE = _MODULE + "x_write_hub_results"

_TEMPORARY = 'with tempfile.TemporaryDirectory(prefix="waterdrum-hub-") as temporary:'
_PREFIX = (
    "the prefix names only the temporary directory, removed before the function returns; "
    "upload_folder is given the folder inside it named after the repository and uploads "
    "paths relative to that folder (allow_patterns too), so the commit, the card's model "
    "name and the return value are the same"
)

JUDGED_ENTRIES: tuple[tuple[str, str | None, str | None, str], ...] = (
    (_PUSH, _TEMPORARY, _TEMPORARY.replace('"waterdrum-hub-"', "None"), _PREFIX),
    (_PUSH, _TEMPORARY, _TEMPORARY.replace("waterdrum-hub-", "XXwaterdrum-hub-XX"), _PREFIX),
    (_PUSH, _TEMPORARY, _TEMPORARY.replace("waterdrum-hub-", "WATERDRUM-HUB-"), _PREFIX),
    (
        _WRITE,
        "stem = f\"{config.dataset_id.split('/')[-1].lower()}_{config.dataset_config}\"",
        "stem = f\"{config.dataset_id.split('/')[+1].lower()}_{config.dataset_config}\"",
        "the file is written only for a published benchmark (config.benchmark: dataset_id is "
        "one of BENCHMARKS, case aside), and each is 'owner/name' with one '/', so the split "
        "has two parts and [+1] is [-1]",
    ),
    (
        _WRITE,
        "yaml = yaml_dump(eval_result_entries_to_yaml(entries), sort_keys=False)",
        "yaml = yaml_dump(eval_result_entries_to_yaml(entries), sort_keys=None)",
        "PyYAML reads sort_keys by its truth (BaseRepresenter.represent_mapping: "
        "`if self.sort_keys:`), and None is false like False",
    ),
    (
        _WRITE,
        'path.write_text(yaml, encoding="utf-8")',
        'path.write_text(yaml, encoding="UTF-8")',
        "codec names are case-insensitive: codecs.lookup gives the same UTF-8 codec",
    ),
)
