"""Every table the ``waterdrum`` commands print on the terminal, checked cell by cell.

Each test prints a table from inputs it built, parses every printed row into its cells and
compares whole rows with cells recomputed from those inputs (means and Student's t intervals
with scipy, audit excesses and Holm-adjusted p-values by hand, formatted as each table
documents): ``waterdrum compare`` (paired and unpaired runs), ``waterdrum audit``'s table, the
demo's model and audit tables, and the owner table of ``waterdrum verify``.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import stats
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import SetValue, WaterDrumResult, compare_seeds, waterdrum_result
from waterdrum_hf.audits import AuditResults
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.scripts import main
from waterdrum_hf.scripts.audit import print_table
from waterdrum_hf.scripts.demo import print_audits, print_models

DASH = "–"


def cells(line: str) -> list[str]:
    """A row's cells: the table separates them by two spaces or more, never one."""
    return re.split(r"\s{2,}", line.strip())


def set_value(value: float | None, interval: tuple[float, float] | None = None) -> SetValue | None:
    """A set's value, with a query interval when given."""
    if value is None:
        return None
    low, high = interval or (None, None)
    return SetValue(value, ci_low=low, ci_high=high)


def result(forget: float | None, retain: float | None, **fields) -> WaterDrumResult:
    """A model's result; ``forget``/``retain`` a value or a ready :class:`SetValue`."""
    sets = {
        name: v if isinstance(v, SetValue) or v is None else SetValue(v)
        for name, v in (("forget", forget), ("retain", retain))
    }
    return WaterDrumResult(**sets, num_queries=60, num_scored=240, num_skipped=0, **fields)


# waterdrum compare ---------------------------------------------------------------------------


def write_reports(folder, runs: dict[str, list[WaterDrumResult]]) -> list[str]:
    """One report folder per (model, run), as `waterdrum score --name MODEL` writes it; every
    model's run 0 first, then run 1, ... (a model with fewer runs drops out of the later ones)."""
    folders = []
    for run in range(max(len(results) for results in runs.values())):
        for model, results in runs.items():
            if run < len(results):
                out = folder / f"{model}-seed{run}"
                out.mkdir()
                report = {"models": {model: results[run].to_dict()}, "settings": {"seed": run}}
                (out / "report.json").write_text(json.dumps(report))
                folders.append(str(out))
    return folders


def t_interval(values: list[float], confidence: float) -> tuple[float, float, float]:
    """Mean and Student's t interval over runs, cut to a set value's range [-1, 1]."""
    mean = float(np.mean(values))
    half = stats.t.ppf((1 + confidence) / 2, len(values) - 1) * stats.sem(values)
    return mean, max(mean - half, -1.0), min(mean + half, 1.0)


def value_cell(value: float, low: float | None, high: float | None, spec: str) -> str:
    """``value [low, high]`` as compare prints it; ``value –`` without an interval."""
    interval = DASH if low is None else f"[{low:{spec}}, {high:{spec}}]"
    return f"{value:{spec}} {interval}"


def expected_set_cell(results: list[WaterDrumResult], name: str, confidence: float) -> str:
    """A set's cell recomputed from the runs: t over runs; one run keeps its query interval."""
    sets = [getattr(r, name) for r in results]
    if any(s is None for s in sets):
        return DASH
    if len(sets) == 1:
        return value_cell(sets[0].value, sets[0].ci_low, sets[0].ci_high, "+.3f")
    return value_cell(*t_interval([s.value for s in sets], confidence), "+.3f")


def check_compare_table(printed: str, runs: dict[str, list[WaterDrumResult]], **options) -> None:
    """Every row and cell of the printed comparison against ``runs`` (and, for the distance
    and the library's own values, ``compare_seeds`` over the same runs)."""
    confidence = options.get("confidence", 0.95)
    comparison = compare_seeds(runs, **options)
    lines = printed.splitlines()
    assert lines[0] == (
        f"Mean over runs [{100 * confidence:g}% interval over runs; of one run, over its queries]"
    )
    assert cells(lines[1]) == ["model", "forget", "retain", "distance", "runs"]
    rows = [cells(line) for line in lines[2 : 2 + len(runs)]]
    assert lines[2 + len(runs) :][:1] in ([], [""])  # the table ends there
    expected = []
    for model, results in runs.items():
        forget, retain = (expected_set_cell(results, s, confidence) for s in ("forget", "retain"))
        for name, cell in (("forget", forget), ("retain", retain)):  # the library agrees
            value = comparison.values[model].get(name)
            shown = DASH if value is None else value_cell(*_fields(value), "+.3f")
            assert shown == cell, (model, name)
        d = comparison.distances.get(model)
        distance = DASH if d is None else value_cell(*_fields(d), ".3f")
        expected.append([model, forget, retain, distance, str(len(results))])
    assert rows == expected


def _fields(value) -> tuple[float, float | None, float | None]:
    return value.value, value.ci_low, value.ci_high


PAIRED = {  # forget, retain of each model in runs (seeds) 0, 1, 2
    "original": [(0.741, 0.662), (0.712, 0.641), (0.733, 0.655)],
    "retrained": [(0.043, 0.694), (0.051, 0.702), (0.024, 0.681)],
    "kl": [(0.292, 0.353), (0.214, 0.304), (0.257, 0.406)],
    "npo": [(0.104, 0.621), (0.123, 0.598), (0.115, 0.634)],
}


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_compare_prints_every_models_means_intervals_distance_and_runs(
    tmp_path, capsys, confidence
):
    """Paired runs: each set's mean with its t interval over the 3 runs, each method's
    distance with its interval, "–" for the reference's and the baseline's distance."""
    runs = {m: [result(f, r) for f, r in values] for m, values in PAIRED.items()}
    argv = ["compare", "--reports", *write_reports(tmp_path, runs)]
    assert main([*argv, "--confidence", str(confidence)]) == 0
    printed = capsys.readouterr().out
    check_compare_table(printed, runs, confidence=confidence)
    comparison = compare_seeds(runs, confidence=confidence)
    assert comparison.distances["kl"].ci_low is not None  # 3 runs: intervals shown
    for model, d in comparison.distances.items():
        mean_offset = np.mean(np.subtract(PAIRED[model], PAIRED["retrained"]), axis=0)
        assert d.value <= math.hypot(*mean_offset) + 1e-12  # noise taken off, never added


def test_compare_unpaired_shows_one_runs_query_interval_and_dashes(tmp_path, capsys):
    """Unpaired runs: a method of one run keeps its query interval and has a distance without
    one; a run with no query interval shows "–" for it; a model without a retain value has "–"
    for it and for its distance; the run counts are each model's own."""
    runs = {m: [result(f, r) for f, r in values] for m, values in PAIRED.items()}
    runs["npo"] = [result(set_value(0.118, (0.071, 0.165)), set_value(0.607, (0.552, 0.659)))]
    runs["ga"] = [result(0.083, None)]  # one run, no query interval, no retain value
    runs["kl"] = runs["kl"][:2]  # 2 runs: a t interval, no distance interval
    folders = write_reports(tmp_path, runs)
    assert main(["compare", "--reports", *folders]) == 2  # paired needs as many runs of each
    capsys.readouterr()
    assert main(["compare", "--reports", *folders, "--unpaired"]) == 0
    printed = capsys.readouterr().out
    check_compare_table(printed, runs, paired=False)
    rows = {row[0]: row for row in map(cells, printed.splitlines()[2:7])}
    assert rows["npo"][1] == "+0.118 [+0.071, +0.165]" and rows["npo"][4] == "1"
    offset = np.subtract((0.118, 0.607), np.mean(PAIRED["retrained"], axis=0))
    assert rows["npo"][3] == f"{math.hypot(*offset):.3f} {DASH}"  # one run: the points' distance
    assert rows["ga"][1:] == [f"+0.083 {DASH}", DASH, DASH, "1"]
    assert rows["kl"][4] == "2" and rows["kl"][3].endswith(f" {DASH}")
    assert rows["original"][3] == rows["retrained"][3] == DASH


# waterdrum audit -----------------------------------------------------------------------------

AUDITED = {  # model -> audit -> (forget, retain); None: the set has no value
    "REF": {
        "before": (0.031, 0.612),
        "relearned": (0.142, 0.633),
        "int8": (0.027, 0.605),
        "deletion:0.2": (0.018, 0.571),
    },
    "npo": {
        "before": (0.054, 0.587),
        "relearned": (0.263, 0.624),
        "int8": (None, 0.598),
        "deletion:0.2": (0.041, None),
    },
    "kl": {
        "relearned": (0.318, 0.502),
        "before": (-0.012, 0.449),
        "int4": (0.077, 0.466),  # the reference has no int4 run: no excess
    },
}


def audit_results(reference: str | None) -> AuditResults:
    """:data:`AUDITED` as ``run_audits`` returns it, its reference model named ``reference``."""
    rename = {"REF": reference or "ref"}
    return AuditResults(
        models={
            rename.get(model, model): {a: result(*values) for a, values in entries.items()}
            for model, entries in AUDITED.items()
        },
        retrained=reference,
    )


def number(value: float | None, spec: str) -> str:
    return DASH if value is None else f"{value:{spec}}"


@pytest.mark.parametrize("reference", ["retrained", "scratch", None])
def test_audit_table_prints_every_models_values_and_excess_per_audit(capsys, reference):
    """One row per model and audit it went through (``before`` included), in order: forget,
    retain ("–" without a value) and forget minus the reference's after the same audit, blank
    for the reference itself, where either has no forget value, and without a reference
    (``run_audits`` takes the reference by any name)."""
    print_table(audit_results(reference))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["model", "audit", "forget", "retain", "excess", "over", "retrained"]
    expected = []
    for model, entries in AUDITED.items():
        name = (reference or "ref") if model == "REF" else model
        for audit, (forget, retain) in entries.items():
            theirs = AUDITED["REF"].get(audit, (None, None))[0]
            excess = []
            if model != "REF" and reference and forget is not None and theirs is not None:
                excess = [f"{forget - theirs:+.3f}"]
            expected.append([name, audit, number(forget, "+.3f"), number(retain, "+.3f"), *excess])
    assert [line.split() for line in lines[1:]] == expected
    shown_excess = [row[4] for row in expected if len(row) == 5]
    assert len(shown_excess) == (5 if reference else 0)  # npo's int8, kl's int4: no excess


# waterdrum demo ------------------------------------------------------------------------------

NULL_KEYS = 200
DEMO_MODELS = {  # forget, its p-value, retain, AUROC
    "original": (0.712, 1 / (1 + NULL_KEYS), 0.655, 0.503),  # on the empirical null's floor
    "retrained": (0.021, 0.41, 0.688, 0.921),
    "npo": (0.104, 2 / (1 + NULL_KEYS), None, None),  # just above the floor: not marked
    "kl": (None, None, 0.301, None),
    "ga": (-0.035, None, 0.402, 0.777),  # no null: no p-value
    "dpo": (0.093, 0.0312, 0.515, 0.648),
}


def demo_models() -> dict[str, WaterDrumResult]:
    return {
        name: result(
            None if forget is None else SetValue(forget, p_value=p),
            retain,
            separability_auroc=auroc,
        )
        for name, (forget, p, retain, auroc) in DEMO_MODELS.items()
    }


@pytest.mark.parametrize("null_keys", [NULL_KEYS, 0])
def test_demo_model_table_prints_every_cell(capsys, null_keys):
    """Every model's forget, retain, AUROC and forget p-value ("–" where missing); a p-value
    on the floor of an empirical null of K keys, 1 / (1 + K), marked "*" and explained once
    below; none marked with the analytic null (K = 0)."""
    print_models(demo_models(), null_keys)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["model", "forget", "retain", "AUROC", "forget", "p-value"]
    expected = []
    for name, (forget, p, retain, auroc) in DEMO_MODELS.items():
        floor = null_keys > 0 and p is not None and p <= (1 + 1e-9) / (1 + null_keys)
        p_cell = number(p, ".2g") + ("*" if floor else "")
        expected.append(
            [name, number(forget, "+.3f"), number(retain, "+.3f"), number(auroc, ".3f"), p_cell]
        )
    assert [line.split() for line in lines[1 : 1 + len(DEMO_MODELS)]] == expected
    marked = [row[0] for row in expected if row[4].endswith("*")]
    assert marked == (["original"] if null_keys else [])
    footnote = (
        f"* the smallest p-value {null_keys} null keys can give, 1 / (1 + {null_keys}): "
        "those models are not ranked by it"
    )
    assert lines[1 + len(DEMO_MODELS) :] == ([footnote] if marked else [])


DEMO_AUDITS = {  # model -> audit -> forget value (retain values play no part here)
    "original": {"before": 0.712, "relearned": 0.745, "int8": 0.709, "int4": 0.688},
    "retrained": {"before": 0.021, "relearned": 0.136, "int8": 0.019, "int4": 0.044},
    "npo": {"before": 0.104, "relearned": 0.271, "int8": None, "deletion:0.2": 0.082},
    "kl": {"relearned": 0.327, "int8": -0.015},  # no unperturbed result
}


def test_demo_audit_table_prints_every_cell(capsys):
    """A column per audit in the order first run; each model's forget value before and after
    each audit with its excess over the retrained model's after the same audit in brackets
    (none for the retrained model, or where either has no value), "–" where it has none."""
    audits = AuditResults(
        models={
            model: {a: result(forget, 0.5) for a, forget in entries.items()}
            for model, entries in DEMO_AUDITS.items()
        },
        retrained="retrained",
    )
    print_audits(audits)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "",
        "Audits: forget value before and after each (excess over the retrained model)",
    ]
    names = ["relearned", "int8", "int4", "deletion:0.2"]
    assert cells(lines[2]) == ["model", "before", *names]
    expected = []
    for model, entries in DEMO_AUDITS.items():
        row = [model, number(entries.get("before"), "+.3f")]
        for name in names:
            mine, theirs = entries.get(name), DEMO_AUDITS["retrained"].get(name)
            cell = number(mine, "+.3f")
            if model != "retrained" and mine is not None and theirs is not None:
                cell += f" ({mine - theirs:+.3f})"
            row.append(cell)
        expected.append(row)
    assert [cells(line) for line in lines[3:]] == expected


# waterdrum verify: the owner table -----------------------------------------------------------

VOCAB = 256
OWNER_KEYS = [3_000_000_017, 3_999_999_929, 3_141_592_653, 2_718_281_829]
WATERMARKED = {OWNER_KEYS[0], OWNER_KEYS[2]}
VERIFY_NULL_KEYS = 99  # Holm over 4 owners needs p <= 0.0125: 1 / (1 + 99) is below


def watermarked_words(key: int, num_texts: int, length: int, seed: int) -> list[str]:
    """Texts whose every next word is, of 8 random candidates, the one Waterfall's function
    (k_p = 1) rates highest under ``key`` after the previous word: a strong watermark."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(num_texts):
        words = [int(rng.integers(VOCAB))]
        for _ in range(length - 1):
            perm = np.random.RandomState((key, words[-1])).permutation(VOCAB)
            candidates = rng.integers(VOCAB, size=8)
            words.append(int(candidates[np.argmax(np.cos(2 * np.pi * perm[candidates] / VOCAB))]))
        texts.append(" ".join(f"w{w}" for w in words))
    return texts


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    m, order = len(p_values), np.argsort(p_values, kind="stable")
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@pytest.mark.parametrize("forget_ids", [[], [OWNER_KEYS[0], OWNER_KEYS[1]]])
def test_verify_owner_table_prints_every_owners_cells(tmp_path, capsys, forget_ids):
    """Each owner's row: its display name (``owner-<n>`` by first appearance), its set, its
    value (the mean of its queries' values), its p-value, that p-value Holm-adjusted over its
    set's owners, and the verdict that adjusted p-value gives at 0.05; every owner listed."""
    tok = word_tokenizer(VOCAB)
    tok.save_pretrained(tmp_path / "tok")
    rows = []
    for n, key in enumerate(OWNER_KEYS):
        make = watermarked_words if key in WATERMARKED else None
        texts = make(key, 3, 16, seed=n) if make else word_texts(VOCAB, 3, 16, seed=n, zipf=None)
        rows += [{"text": t, "owner_id": key} for t in texts]
    rows = rows[6:] + rows[:6]  # the third owner first: first appearance decides the names
    (tmp_path / "outputs.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    argv += ["--id-column", "owner_id", "--null-keys", VERIFY_NULL_KEYS]
    argv += ["--forget-ids", *forget_ids] if forget_ids else []
    assert main([str(a) for a in argv]) == 0
    lines = capsys.readouterr().out.splitlines()

    texts, owners = [r["text"] for r in rows], [r["owner_id"] for r in rows]
    details = waterdrum_result(
        texts,
        owners,
        tok,
        config=WaterDrumConfig.from_keywords({"null_keys": VERIFY_NULL_KEYS}),
        forget_ids=forget_ids or None,
        return_details=True,
    )
    names = {key: f"owner-{n}" for n, key in enumerate(dict.fromkeys(owners), start=1)}
    per_owner = details.per_owner
    assert set(per_owner) == set(names.values())
    sets = {
        key: "overall" if not forget_ids else "forget" if key in forget_ids else "retain"
        for key in names
    }
    adjusted = {}
    for family in set(sets.values()):
        members = [names[k] for k in names if sets[k] == family]
        adjusted |= dict(zip(members, holm([per_owner[o].p_value for o in members]), strict=True))
    query_values = np.array(details.query_values)
    expected = []
    for key, name in names.items():
        mine = query_values[np.array(details.query_owners) == name]
        value = float(np.mean(mine[~np.isnan(mine)]))
        assert per_owner[name].value == pytest.approx(value)
        verdict = "detected" if adjusted[name] <= 0.05 else "not detected"
        p = per_owner[name].p_value
        expected.append([name, sets[key], f"{value:+.4f}", f"{p:.4f}", f"{adjusted[name]:.4f}"])
        expected[-1].append(verdict)
    header = lines.index("owner        set        value       p  Holm p  verdict")
    table = lines[header + 1 : header + 1 + len(names)]
    assert [line.split(maxsplit=5) for line in table] == expected
    assert lines[header + 1 + len(names)].split()[1] in ("owners", "owners:")  # then the summary
    verdicts = [row[-1] for row in expected]
    assert verdicts.count("detected") == 2 and verdicts.count("not detected") == 2
    for key, row in zip(names, expected, strict=True):
        assert (row[-1] == "detected") == (key in WATERMARKED)
