"""The README moved into the documentation pages, and nothing it said was lost.

The README before the move is read from git at test time (commit ``MOVED_FROM``, the last one
with the whole README). Every paragraph, list item, table row and code block of it must be in
README.md or a page under docs/, whitespace and link targets aside (links were rewritten to
resolve from their new pages); every heading must still be a heading there, and every
generated block must still have its markers. The few units reworded in the move are listed in
``REWORDED`` with the words they now begin with, which must be there too. So dropping a
section, a paragraph or a snippet fails here. The README and the metric card are also held to
their length.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOVED_FROM = "b819cbd"
"""The last commit whose README held everything, before the documentation site (issue 44)."""

README_LINES = 250
"""The README: a paragraph, the install, the two set-up commands, three snippets, the demo's
block and links (issue 44's bound)."""
CARD_LINES = 195
"""The metric card without its generated blocks: what evaluate's Hub page shows. 42 of these
lines are fixed: the YAML header (12) and the two BibTeX entries (30); the rest is the
description, usage, inputs, outputs and limitations. The generated settings table is not
counted: it grows by a row with each scheme setting."""

#: Units of the old README reworded in the move: its first words -> the new unit's.
REWORDED = {
    # 0.2's names: compute_waterdrum is waterdrum_metrics, EvaluationPlan is CallbackPlan
    "```python import waterdrum_hf from waterdrum_hf import IntervalConfig, NullConfig,": (
        "```python import waterdrum_hf from waterdrum_hf import IntervalConfig, NullConfig,"
    ),
    "`waterdrum_result` takes the same arguments and returns the typed `WaterDrumResult`;": (
        "`waterdrum_result` takes the same arguments and returns the typed `WaterDrumResult`; "
        "`waterdrum_metrics`"
    ),
    "The flat keyword arguments of 0.1 (`compute_waterdrum(..., k_p=1": (
        "The flat keyword arguments of 0.1 (`compute_waterdrum(..., k_p=1"
    ),
    "```python import waterdrum_hf from waterdrum_hf.data import ForgetRetainDataset": (
        "```python import waterdrum_hf from waterdrum_hf.data import ForgetRetainDataset"
    ),
    "`WaterDrumCallback` works with any `Trainer` (plain, the unlearning trainers,": (
        "`WaterDrumCallback` works with any `Trainer` (plain, the unlearning trainers,"
    ),
    # the reproduction rerun with the baselines also on the unwatermarked data (issue 54)
    "Separability (D1: AUROC of per-query values on the retrained model) and calibration": (
        "Separability (D1: AUROC of per-query values on the retrained model) and calibration"
    ),
    "In short, measured on 2 CPU cores (": "In short, measured on 2 CPU cores (",
    # the capacity study's intervals are cut where R² ends (at 1)
    "- **Calibration goes with memorisation more than with carry-over or size, at this scale": (
        "- **Calibration goes with memorisation more than with carry-over or size, at this scale"
    ),
    # the GPU guide: measured again on an H200 (warm generation, the callback, `waterdrum score`)
    "Measured once on a lent NVIDIA H100 (80 GB) by `python -m benchmarks.gpu`": (
        "Measured on lent GPUs by `python -m benchmarks.gpu`"
    ),
    '- **Generation batch:** `batch_size="auto"`.': '- **Generation:** the default, `batch_size="auto"`',
    "- **Callback:** `max_queries_per_owner` 4 to 16. At 64": (
        "- **Callback:** `max_queries_per_owner` 4 to 16. Its first evaluation compiles"
    ),
    # "the demo's block below": the block is on the Concepts page now
    "- `interval`: `IntervalConfig(confidence=0.95": "- `interval`: `IntervalConfig(confidence=0.95",
    # "see its report above": the report is on the Concepts page
    "Every perturbed model is sampled and scored like the unperturbed one": (
        "Every perturbed model is sampled and scored like the unperturbed one"
    ),
    # "(see below)", "(below)": the lm-eval and audits sections are pages of their own
    "```bash waterdrum demo [--out DIR]": "```bash waterdrum demo [--output-dir DIR]",
    "`score --attack NAME:STRENGTH` edits": "`score --attack NAME:STRENGTH` edits",
    # "The metric card says how to report the values": that moved to the Hub guide
    "- On the Hub: `waterdrum_hf.write_hub_results": "- On the Hub: `waterdrum_hf.write_hub_results",
    # lm-eval's vLLM backend: tested now through local-completions against a vLLM server; the
    # in-process backend cannot share an environment with this library (the servers guide)
    "lm-eval's vLLM backend takes the same task": "lm-eval's `local-completions` backend runs the",
    "```bash lm_eval --model vllm": "```bash lm_eval --model local-completions",
    # "Choosing a scheme" rewritten for four schemes (issue 45): the two-scheme comparison, its
    # hand-quoted table and its prose are superseded by the generated `schemes` block
    "Waterfall is the default and the paper's choice": "Four data-owner schemes are known by name",
    "How they compare: `waterdrum reproduce --schemes waterfall kgw`": (
        "How they compare: `waterdrum reproduce --schemes waterfall kgw synthid exp_edit`"
    ),
    "| | D1 AUROC (ours / paper)": "| scheme | D1 AUROC (ours / paper)",
    "| Waterfall | 0.990": "| Waterfall | ",
    "| Adapted KGW | 0.944": "| Adapted KGW | ",
    "Waterfall separates better here too": "Where it does not: **separability**.",
    # modules moved into folders for every part (issue 53): the layout and the paths quoted
    "Data flows one way: prompting and generation -> verification -> metric -> report.": (
        "Data flows one way: prompting and generation -> verification -> metric -> report. The "
        "source tree shows it: the root holds the public entry"
    ),
    "- `null`: `<set>_p_value` answers a data owner's": "- `null`: `<set>_p_value` answers a",
    # one word per thing in the commands: --dataset-name, --output-dir (issue 53)
    "- `waterdrum_local`: your JSON Lines file with an `owner_id` column": (
        "- `waterdrum_local`: your JSON Lines file with an `owner_id` column"
    ),
    "```bash waterdrum score --generations results/*/samples_waterdrum_ax_*.jsonl": (
        "```bash waterdrum score --generations results/*/samples_waterdrum_ax_*.jsonl \\ "
        "--dataset-name waterdrum-ax"
    ),
    '```bash pip install "waterdrum-hf[quantization]" # torchao, for the quantization audit': (
        '```bash pip install "waterdrum-hf[quantization]" # torchao, for the quantization audit '
        "waterdrum audit --model-name-or-path"
    ),
    # the lm-eval task's scoring takes the flat settings (issue 53)
    "- `--metadata` also takes `config`, `split`, `dataset_path`": (
        "- `--metadata` also takes `config`, `split`, `dataset_path`"
    ),
    # the layout gained the new schemes' modules (issue 45), then folders for every part (53)
    "``` waterdrum_hf/ keys.py": "``` waterdrum_hf/ the root: the public entry",
    # the dilution study gained ITS, the paper's third row (issue 45)
    "- **A model owner's own watermark does not mask the data owners'.**": (
        "- **A model owner's own watermark does not mask the data owners'.** With Waterfall, KGW, ITS"
    ),
    "```bash waterdrum reproduce --quick --out reproduction": (
        "```bash waterdrum reproduce --quick --output-dir reproduction"
    ),
    # the mutation gate grew past the core and runs area by area (issue 43)
    "Mutation testing (not in CI) checks that the fast tests notice a changed operator": (
        "Mutation testing (not in CI) checks that the fast tests notice a changed operator or "
        "constant in the scoring core, the schemes and the losses, and in everything users read"
    ),
    # the built-in model ships and the kernels stage runs in CI (issue 52)
    "(`bash dev.sh floors` runs the tests against the lowest declared versions": (
        "(`bash dev.sh floors` runs the tests against the lowest declared versions of the "
        "dependencies; `bash dev.sh kernels` runs the tests whose values depend on the CPU's"
    ),
    "`bash dev.sh demo` (that is, `waterdrum demo`) watermarks the passages": (
        "`bash dev.sh demo` (that is, `waterdrum demo`) watermarks the passages"
    ),
    "Tests and CI run offline (`HF_HUB_OFFLINE=1`": "Tests and CI run offline (`HF_HUB_OFFLINE=1`",
    # score refuses to replace a report, compare reports scored differently (issue 56)
    "`score` runs the paper's protocol": "`score` runs the paper's protocol",
}
LINK = re.compile(r"\]\([^)\s]*\)")
GENERATED = re.compile(r"<!-- ([\w-]+):start -->.*?<!-- \1:end -->", flags=re.S)


def normal(text: str) -> str:
    """Whitespace collapsed and link targets dropped."""
    return " ".join(LINK.sub("]()", text).split())


def units(markdown: str) -> list[str]:
    """Code blocks whole; outside them paragraphs, split into list items (a top-level ``- ``
    each, its sub-items inside) and table rows. Generated blocks are left out."""
    markdown = GENERATED.sub("", markdown)
    found, lines, fence = [], [], False

    def flush() -> None:
        if lines:
            found.append("\n".join(lines))
            lines.clear()

    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            if not fence:
                flush()
            lines.append(line)
            fence = not fence
            if not fence:
                flush()
        elif fence:
            lines.append(line)
        elif not line.strip() or line.startswith("#"):
            flush()
        elif line.startswith(("- ", "|")):
            flush()
            lines.append(line)
        else:
            lines.append(line)
    flush()
    return found


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.fixture(scope="module")
def old_readme() -> str:
    done = subprocess.run(
        ["git", "show", f"{MOVED_FROM}:README.md"], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode:
        pytest.skip(f"git cannot show {MOVED_FROM}:README.md here (not a clone of the repository)")
    return done.stdout


@pytest.fixture(scope="module")
def corpus() -> str:
    return normal("\n\n".join(page.read_text() for page in pages()))


def test_every_unit_of_the_old_readme_is_on_a_page(old_readme, corpus):
    missing = []
    for unit in units(old_readme):
        text = normal(unit)
        reworded = [new for old, new in REWORDED.items() if text.startswith(normal(old))]
        if reworded:
            assert normal(reworded[0]) in corpus, reworded[0]
        elif text not in corpus:
            missing.append(text[:100])
    assert not missing, f"{len(missing)} units of the old README are on no page: {missing}"


def test_every_old_heading_and_generated_block_is_still_there(old_readme, corpus):
    headings = [
        line.lstrip("#").strip() for line in old_readme.splitlines() if re.match(r"#+ ", line)
    ]
    now = {
        line.lstrip("#").strip()
        for page in pages()
        for line in page.read_text().splitlines()
        if re.match(r"#+ ", line)
    }
    code = "\n".join(u for u in units(old_readme) if u.startswith("```"))
    titles = [h for h in headings if h not in code]  # comments inside code are not headings
    assert set(titles) <= now, sorted(set(titles) - now)
    for name in GENERATED.findall(old_readme):
        assert f"<!-- {name}:start -->" in corpus, name


def test_a_dropped_paragraph_is_noticed(old_readme):
    """The check above can fail: the old README's own units, one left out, are not all found."""
    every = units(old_readme)
    dropped = normal("\n\n".join(every[:10] + every[11:]))
    assert normal(every[10]) not in dropped


def test_the_readme_and_the_card_keep_to_their_length():
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_LINES
    card = GENERATED.sub("", (ROOT / "metrics/waterdrum/README.md").read_text())
    assert len(card.splitlines()) <= CARD_LINES


def test_the_readme_links_every_page():
    """Every page under docs/ is linked from the README, directly or from a page it links."""
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[^)#\s]+\.md)", readme))
    index = (ROOT / "docs" / "index.md").read_text()
    linked |= {f"docs/{p}" for p in re.findall(r"\]\(([^)#\s:]+\.md)", index)}
    ours = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")}
    assert ours <= linked, sorted(ours - linked)


def test_the_set_up_commands_are_the_two_ci_runs():
    """The README's and the docs' set-up block is the two commands, exactly, and the test
    command is the one CI runs (``.ci/run``)."""
    block = (
        "```bash\n"
        "bash dev.sh demo   # the whole WaterDrum loop on the built-in small model: `waterdrum demo`\n"
        "bash dev.sh test   # the test suite (offline)\n"
        "```"
    )
    for page in ("README.md", "docs/index.md", "docs/quickstart.md"):
        assert block in (ROOT / page).read_text(), page
    assert "\nstep bash dev.sh test\n" in (ROOT / ".ci/run").read_text()  # timed, as run
