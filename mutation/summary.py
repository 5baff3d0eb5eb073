"""The mutation gate, module by module: one table of every module in ``only_mutate``, read
from the area reports in ``mutation/results/``.

The gate runs area by area (a full run of every module would take hours on two cores), and
each area's report (``mutation*.md``) keeps its history: earlier tables, survivors, how each
run went. Each table that holds current results follows a line ``<!-- current -->``.
This script gathers those rows, checks that no module has two current rows and says which
modules have none or score below the gate's bar, so a reader sees the whole gate in one place.

    python mutation/summary.py            # print
    python mutation/summary.py --write    # also write mutation/results/summary.md
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own TOML reader
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "mutation" / "results"
SUMMARY = RESULTS / "summary.md"
#: The line before an area report's current table.
MARKER = "<!-- current -->"
#: The share of countable mutants the tests must kill, per module (issue 43).
BAR = 97.0
COLUMNS = (
    "mutants",
    "killed",
    "timeout",
    "message-only",
    "equivalent",
    "survived",
    "no tests",
    "not checked",
)
#: The column of mutants a stopped run never reached (tables written before it have none).
NOT_RUN = "not run"
#: Modules moved since their current table was measured: old path -> new path (issue 53's
#: folders). Their rows are read under the new path and say where they were measured.
MOVED = {
    f"waterdrum_hf/{old}.py": f"waterdrum_hf/{new}.py"
    for old, new in (
        ("seed_comparison", "scoring/seed_comparison"),
        ("verification", "scoring/verification"),
        ("analytic_null", "scoring/analytic_null"),
        ("schemes/kgw", "schemes/kgw/scheme"),
        ("schemes/processor", "schemes/permutation_processor"),
        ("hub_results", "hub_results/publish"),
        ("hub_results_config", "hub_results/config"),
    )
} | {
    f"benchmarks/{name}.py": f"docs/generators/{name}.py"
    for name in ("trust_block", "gpu_block", "demo_block", "doc_blocks", "schemes_block")
}


@dataclass(frozen=True)
class ModuleRow:
    """One module's counts in an area report's current table."""

    module: str
    counts: dict[str, int]
    report: str
    measured_as: str | None = None
    """The module's path when it was measured, where it has moved since (:data:`MOVED`)."""

    @property
    def countable(self) -> int:
        """Mutants that could be killed: all but message-only, equivalent and not checked."""
        c = self.counts
        return c["mutants"] - c["message-only"] - c["equivalent"] - c["not checked"]

    @property
    def score(self) -> float | None:
        """Killed (with timeouts) over countable mutants, in percent; None with none countable."""
        killed = self.counts["killed"] + self.counts["timeout"]
        return 100.0 * killed / self.countable if self.countable else None


def gated_modules(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The gate's modules as its reports name them (``waterdrum_hf/...``, ``benchmarks/...``)."""
    with open(pyproject, "rb") as config:
        only_mutate = tomllib.load(config)["tool"]["mutmut"]["only_mutate"]
    return [path.removeprefix("src/") for path in only_mutate]


def current_rows(report: Path) -> list[ModuleRow]:
    """The module rows of each table after a marker in the report (none without one)."""
    lines = report.read_text(encoding="utf-8").splitlines()
    rows = []
    for at in (i for i, line in enumerate(lines) if line.strip() == MARKER):
        table = lines[at + 1 :]
        header = [cell.strip() for cell in table[0].strip("|").split("|")] if table else []
        columns = [*COLUMNS, NOT_RUN] if NOT_RUN in header else list(COLUMNS)
        if header != ["module", *columns, "score"]:
            raise ValueError(
                f"{report.name}: the line after {MARKER} (line {at + 1}) starts no gate table"
            )
        for line in table[2:]:
            if not line.startswith("|"):
                break
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if not cells[0].startswith("**"):  # not the report's own total
                counts = {NOT_RUN: 0} | dict(zip(columns, map(int, cells[1:-1]), strict=True))
                moved = cells[0] if cells[0] in MOVED else None
                row = ModuleRow(MOVED.get(cells[0], cells[0]), counts, report.name, moved)
                if cells[-1] != _score_cell(row):
                    raise ValueError(
                        f"{report.name}: {row.module}'s score reads {cells[-1]}, its counts give "
                        f"{_score_cell(row)}"
                    )
                rows.append(row)
    return rows


def gather(
    results: Path = RESULTS, modules: list[str] | None = None
) -> tuple[list[ModuleRow], list[str]]:
    """Each gated module's current row, in ``only_mutate``'s order, and the modules without one.

    Refuses a module with current rows in two reports (which one would be true?) and a current
    row for a module the gate no longer mutates.
    """
    modules = gated_modules() if modules is None else modules
    found: dict[str, ModuleRow] = {}
    for report in sorted(results.glob("mutation*.md")):
        if report.name == SUMMARY.name:
            continue
        for row in current_rows(report):
            if row.module in found:
                raise ValueError(
                    f"{row.module} has a current table in {found[row.module].report} and in {report.name}"
                )
            if row.module not in modules:
                raise ValueError(f"{report.name} lists {row.module}, which is not in only_mutate")
            found[row.module] = row
    return [found[m] for m in modules if m in found], [m for m in modules if m not in found]


def _score_cell(row: ModuleRow) -> str:
    return "-" if row.score is None else f"{row.score:.1f} %"


def render(rows: list[ModuleRow], missing: list[str]) -> str:
    """The summary page: one line per module, then what is below the bar or has no report."""
    lines = [
        "# The mutation gate, module by module",
        "",
        "Generated by `python mutation/summary.py --write` from the current table of each",
        "area report (the table after `<!-- current -->` in `mutation/results/mutation*.md`); each",
        "report says how its run went, when, and lists its survivors and judgements.",
        "",
        "| module | mutants | killed | message-only | equivalent | not checked | survived | not run "
        "| score | report |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        c = row.counts
        name = row.module + (f" (measured as {row.measured_as})" if row.measured_as else "")
        lines.append(
            f"| {name} | {c['mutants']} | {c['killed'] + c['timeout']} | {c['message-only']} "
            f"| {c['equivalent']} | {c['not checked']} | {c['survived'] + c['no tests']} "
            f"| {c[NOT_RUN]} | {_score_cell(row)} | [{row.report}]({row.report}) |"
        )
    below = [row.module for row in rows if row.score is not None and row.score < BAR]
    lines += [
        "",
        "score = (killed + timeout) / (mutants - message-only - equivalent - not checked); "
        "survived counts mutants no test reaches too; not run (a run stopped before them) counts "
        "against the score.",
        "",
        f"Below {BAR:.0f} %: " + (", ".join(below) if below else "none") + ".",
        "",
        "Without a current table: " + (", ".join(missing) if missing else "none") + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help=f"also write {SUMMARY.relative_to(ROOT)}"
    )
    args = parser.parse_args()
    text = render(*gather())
    print(text, end="")
    if args.write:
        SUMMARY.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
