"""Mutation score of the gate: do the fast tests notice when the code users read changes?

mutmut (the ``mutation`` extra, configured under ``[tool.mutmut]`` in pyproject.toml) changes
one operator, constant or argument at a time in the modules of ``only_mutate``: the scoring
core (statistics, the metric, verification, the nulls, the bootstrap, the losses, the schemes'
reading code) and what users read or publish (the Hub results, the data formats, the text
attacks, the report with its verdicts, plots and token view, the audits, and the benchmark
code behind each published figure and generated block), and runs the tests
that reach the changed function (fast tests of those modules only). A mutant the tests let
pass "survived". Prints, per module, mutants, killed, survived and the score: killed over the
mutants that could be killed, i.e. leaving out

* message-only mutants: the change is only in the arguments of a raised exception or the
  strings of a warning or log call (``"XX...XX"``, upper case, ``None``); tests match
  messages by a phrase, and a message cannot change a number;
* the mutants judged equivalent in ``mutation/judged*.py``, each with the reason
  it changes nothing a test can observe (``mutation/probes.py`` runs each of these
  and each message-only mutant against the original to show it);
* the mutants judged "not checked" there: those only a GPU tells apart (their CUDA tests skip
  on the CPUs the gate runs on), code mutmut cannot switch on, and a study's run (it trains
  models for minutes; the gate covers what turns its results into figures); a column of their
  own, neither killed nor equivalent.

Then lists every survivor with the line it changes. A full run takes about an hour or more
on two cores (the header of ``mutation/results/mutation.md`` says how the last one went);
torch and the tests are imported once and forked per mutant, and ``--max-children 2`` halves
it on an idle machine. Not run by CI.

    pip install -e ".[mutation]"
    python mutation/score.py --report mutation/results/mutation.md   # full run
    python mutation/score.py --retest   # only the survivors, after new tests (tests' reach traced afresh)
    python mutation/score.py --resume   # finish an interrupted run
    python mutation/score.py --no-run   # the report of the last run
    python mutation/score.py --modules metric bootstrap   # only these modules' mutants

To cover a new module, add it to ``only_mutate`` and its test file to
``pytest_add_cli_args_test_selection`` in pyproject.toml.

The run happens in ``.mutation/`` (git-ignored): a copy of the package laid out as installed
(``src/waterdrum_hf`` with ``trainers`` and ``metrics`` inside) and of ``tests/``; mutmut's
results stay there between runs.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

from judged import JUDGED

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own TOML reader
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
#: The gate's scratch folder; ``MUTATION_WORKSPACE`` names another (e.g. one copy per person).
WORKSPACE = ROOT / os.environ.get("MUTATION_WORKSPACE", ".mutation")
#: Where each part of the source tree sits in the installed package.
INSTALLED_LAYOUT = {
    "waterdrum_hf": "src/waterdrum_hf",
    "trainers": "src/waterdrum_hf/trainers",
    "metrics": "src/waterdrum_hf/metrics",
}
#: Calls whose string arguments are messages to a person, not values.
MESSAGE_CALLS = {"warn", "warn_user", "warning", "info", "debug", "error", "exception"}


def build_workspace(fresh: bool, commit: str | None = None) -> None:
    """Copy the repository's tracked files into the workspace, the package in its installed
    layout; the rest (tests, benchmarks and their results, pages, cards) where they are.

    The files are the working tree's, or those of ``commit``: a run that lasts an hour then
    tests what was committed, not whatever half-written test someone has open meanwhile.
    """
    if fresh and WORKSPACE.exists():
        shutil.rmtree(WORKSPACE)
    with tempfile.TemporaryDirectory() as exported:
        source = ROOT
        if commit is not None:
            source = Path(exported)
            archive = subprocess.run(
                ["git", "archive", commit], cwd=ROOT, check=True, capture_output=True
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(source, filter="data")
        listing = (
            ["git", "ls-files", "-z"]
            if commit is None
            else ["git", "ls-tree", "-r", "-z", "--name-only", commit]
        )
        tracked = subprocess.run(
            listing, cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.split("\0")
        for name in filter(None, tracked):
            top, _, rest = name.partition("/")
            if top == "waterdrum_hf" and rest.split("/")[0] in INSTALLED_LAYOUT:
                continue  # a subpackage with its own place in the layout
            targets = [f"{INSTALLED_LAYOUT[top]}/{rest}"] if top in INSTALLED_LAYOUT else []
            if top not in ("waterdrum_hf", "trainers"):
                targets.append(name)  # metrics/ also where the card's tests read it
            for target in targets:
                copy = WORKSPACE / target
                copy.parent.mkdir(parents=True, exist_ok=True)
                if not copy.exists() or copy.read_bytes() != (source / name).read_bytes():
                    shutil.copy2(source / name, copy)
                # mutmut's own copy of a data file (results, pages) is made once and never
                # refreshed: a test reading it would read the first run's version
                mirror = WORKSPACE / "mutants" / target
                stale = mirror.is_file() and mirror.read_bytes() != copy.read_bytes()
                if stale and not name.endswith(".py"):
                    shutil.copy2(copy, mirror)
    forget_unmutated_copies()


def forget_test_coverage() -> None:
    """Drop mutmut's record of which tests reach which function, so the next run records it
    afresh (a few minutes: one traced run of the selected tests).

    mutmut traces only the tests it has not seen before; a test that was edited since (say, to
    cover a NaN interval) keeps its old reach, and a mutant that only the edit kills would be
    retested without it and read "survived".
    """
    (WORKSPACE / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)


def forget_unmutated_copies() -> None:
    """Drop mutmut's plain copy of each ``only_mutate`` file it has not mutated yet.

    mutmut copies every source file into ``mutants/`` and mutates only ``only_mutate``; a file
    added to ``only_mutate`` after a run keeps its plain copy, which mutmut takes as
    up to date, so its mutants would never be made. Its recorded test coverage (which tests
    reach which function) predates the new file's functions too, so it goes as well: without
    it every new mutant would read "no tests".
    """
    with open(ROOT / "pyproject.toml", "rb") as config:
        only_mutate = tomllib.load(config)["tool"]["mutmut"]["only_mutate"]
    mutants = WORKSPACE / "mutants"
    dropped = False
    for source in only_mutate:
        copy = mutants / source
        if copy.exists() and not copy.with_name(copy.name + ".meta").exists():
            copy.unlink()
            dropped = True
    if dropped:
        forget_test_coverage()


def run_mutmut(mutant_names: list[str], max_children: int) -> None:
    """``mutmut run`` (named mutants only, if given), each child on one torch/BLAS thread.

    One thread per child: with several children on few cores, torch's default threads spin
    for busy cores and every test slows down many times over. The jemalloc inside pyarrow
    (under ``datasets``) runs without its background thread: a child forked while that thread
    held a lock hung until mutmut's timeout (seen here on the verification mutants, as
    timeouts that no test caused).
    """
    mutmut = Path(sys.executable).with_name("mutmut")
    command = [str(mutmut), "run", "--max-children", str(max_children), *mutant_names]
    threads = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    env = {**os.environ, **threads, "JE_ARROW_MALLOC_CONF": "background_thread:false"}
    subprocess.run(command, cwd=WORKSPACE, check=True, env=env)


def load_results() -> dict[str, dict[str, int | None]]:
    """``{mutated file (installed path): {mutant name: exit code}}`` from mutmut's meta files."""
    results = {}
    for meta in sorted((WORKSPACE / "mutants").rglob("*.py.meta")):
        source = meta.relative_to(WORKSPACE / "mutants").as_posix().removesuffix(".meta")
        results[source] = json.loads(meta.read_text())["exit_code_by_key"]
    return results


def function_code(module: object, mutant_name: str) -> tuple[str, str]:
    """The original and the mutated function of ``mutant_name`` in a parsed mutated file."""
    import libcst as cst
    from mutmut.mutation.diff_apply import read_mutant_function, read_original_function

    return tuple(
        cst.Module([f(module, mutant_name)]).code
        for f in (read_original_function, read_mutant_function)
    )


def _without_messages(code: str) -> str:
    """The function's AST as text, without the function's name, the arguments of every
    exception it raises and the strings of its warning and log calls."""
    tree = ast.parse(textwrap.dedent(code))

    def blank(node: ast.AST) -> None:
        for child in ast.walk(node):
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                child.value = ""

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.name = ""
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            node.exc.args, node.exc.keywords = [], []  # the exception's message
        elif isinstance(node, ast.Call):
            func = node.func  # warnings.warn(...), logger.warning(...) or warn_user(...)
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in MESSAGE_CALLS:
                blank(node)
    return ast.dump(tree)


def changed_code(original: str, mutant: str) -> tuple[str, str]:
    """The lines a mutant removes and adds, each stripped and joined: how judgements name it."""
    import difflib

    diff = list(difflib.unified_diff(original.splitlines(), mutant.splitlines(), lineterm=""))
    removed = " ".join(l[1:].strip() for l in diff[2:] if l.startswith("-"))  # noqa: E741
    added = " ".join(l[1:].strip() for l in diff[2:] if l.startswith("+"))  # noqa: E741
    return removed, added


def module_of(source: str) -> str:
    """The dotted module of a mutated file's installed path, e.g. ``trainers.losses`` (the
    package's), ``benchmarks.capacity`` or ``docs.generators.trust_block``."""
    return source.removeprefix("src/waterdrum_hf/").removesuffix(".py").replace("/", ".")


def mutant_pattern(module: str) -> str:
    """mutmut's pattern for every mutant of ``module`` (as ``module_of`` spells it)."""
    dotted = module.removesuffix(".__init__")  # mutmut names a package's mutants after it
    package = "" if module.startswith(("benchmarks.", "docs.generators.")) else "waterdrum_hf."
    return f"{package}{dotted}.x*"  # its functions' mutants (x_f, xǁClassǁf), not submodules'


def classify(results: dict[str, dict[str, int | None]]) -> dict[str, dict[str, list]]:
    """Per mutated file: mutants by outcome (``killed``, ``survived``, ``message``,
    ``equivalent``, ``timeout``, ``no tests``, ``not checked``, ``not run``, ``other``);
    survivors come with their change. ``not run`` (a run stopped early) is kept apart from the
    judged ``not checked``: it counts against the score, as a survivor does."""
    from mutmut.stats import status_by_exit_code

    judged = {(j.function, j.before, j.after): j for j in JUDGED}
    table: dict[str, dict[str, list]] = {}
    for source, exit_codes in results.items():
        module = None
        rows: dict[str, list] = {}
        for name, code in sorted(exit_codes.items(), key=lambda kv: _natural(kv[0])):
            status = status_by_exit_code[code]
            if code is None:  # mutmut's "not checked": the run stopped before this mutant
                outcome = "not run"
            elif status in ("killed", "timeout", "no tests", "survived", "not checked"):
                outcome = status
            elif status == "segfault":
                outcome = "killed"
            else:
                outcome = "other"
            entry: tuple = (name, status)
            # A timeout too: a mutant that only changes a message, or one judged equivalent,
            # cannot loop; it ran past mutmut's limit because the machine was busy.
            if outcome in ("survived", "no tests", "timeout"):
                if module is None:
                    import libcst as cst

                    module = cst.parse_module((WORKSPACE / "mutants" / source).read_text())
                original, mutant = function_code(module, name)
                before, after = changed_code(original, mutant)
                function = name.partition("__mutmut_")[0]
                if _without_messages(original) == _without_messages(mutant):
                    outcome = "message"
                    entry = (name, before, after)
                elif (function, before, after) in judged or (function, None, None) in judged:
                    verdict = judged.get(
                        (function, before, after), judged.get((function, None, None))
                    )
                    outcome = verdict.category  # "equivalent" or "not checked"
                    entry = (name, verdict.reason, verdict)
                elif outcome != "timeout":
                    entry = (name, status, before, after)
            rows.setdefault(outcome, []).append(entry)
        table[source] = rows
    return table


def _natural(name: str) -> tuple[str, int]:
    function, _, number = name.rpartition("__mutmut_")
    return function, int(number) if number.isdigit() else 0


def report(table: dict[str, dict[str, list]]) -> str:
    """Markdown: the per-module table, then the survivors and the judged equivalents."""
    from importlib.metadata import version

    lines = [
        f"Mutation score of the gate (mutmut {version('mutmut')}, "
        "`python mutation/score.py`; configuration: `[tool.mutmut]` in pyproject.toml, "
        "equivalents: `mutation/judged.py`).",
        "",
        "| module | mutants | killed | timeout | message-only | equivalent | survived "
        "| no tests | not checked | not run | score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    totals: Counter = Counter()
    for source, rows in table.items():
        counts = Counter({outcome: len(entries) for outcome, entries in rows.items()})
        counts["mutants"] = sum(len(entries) for entries in rows.values())
        totals.update(counts)
        lines.append(_row(source.removeprefix("src/"), counts))
    lines.append(_row("**all**", totals))
    lines += [
        "",
        "score = (killed + timeout) / (mutants - message-only - equivalent - not checked); "
        "survivors, mutants no fast test reaches and mutants not run yet count against it.",
    ]
    survivors = {
        source: [e for o in ("survived", "no tests", "other") for e in rows.get(o, [])]
        for source, rows in table.items()
    }
    lines += ["", f"## Survivors ({sum(map(len, survivors.values()))})"]
    for source, entries in survivors.items():
        lines += ["", f"### {source.removeprefix('src/')} ({len(entries)})", ""] if entries else []
        for name, status, *change in entries:
            lines.append(f"- `{name.rpartition('.')[2]}` ({status})")
            if change:
                lines += [f"  - `{change[0]}`", f"  + `{change[1]}`"]
    messages = [entry for rows in table.values() for entry in rows.get("message", [])]
    lines += ["", f"## Message-only ({len(messages)})", ""]
    lines += [f"- `{name}`: `{before}` -> `{after}`" for name, before, after in messages]
    equivalents = [entry for rows in table.values() for entry in rows.get("equivalent", [])]
    lines += ["", f"## Judged equivalent ({len(equivalents)})", ""]
    lines += [f"- `{name}`: {reason}" for name, reason, *_ in equivalents]
    unchecked = [entry for rows in table.values() for entry in rows.get("not checked", [])]
    lines += ["", f"## Not checked ({len(unchecked)})", ""]
    lines += [f"- `{name}`: {why}" for name, why, *_ in unchecked]  # a reason, or mutmut's status
    return "\n".join(lines) + "\n"


def _row(label: str, counts: Counter) -> str:
    scorable = counts["mutants"] - counts["message"] - counts["equivalent"] - counts["not checked"]
    detected = counts["killed"] + counts["timeout"]
    score = f"{100 * detected / scorable:.1f} %" if scorable else "-"
    cells = [counts[k] for k in ("mutants", "killed", "timeout", "message", "equivalent")]
    cells += [counts["survived"] + counts["other"], counts["no tests"], counts["not checked"]]
    cells.append(counts["not run"])
    return f"| {label} | " + " | ".join(map(str, cells)) + f" | {score} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--retest", action="store_true", help="rerun only the mutants not killed")
    group.add_argument("--resume", action="store_true", help="continue an interrupted run")
    group.add_argument("--no-run", action="store_true", help="only report the last run")
    parser.add_argument("--report", type=Path, help="also write the report (markdown) here")
    parser.add_argument(
        "--modules",
        nargs="+",
        metavar="MODULE",
        help="run and report only these modules of only_mutate (e.g. metric trainers.losses)",
    )
    parser.add_argument(
        "--max-children",
        type=int,
        default=1,
        help="mutants tested at once (one core each; default 1 leaves the machine usable)",
    )
    parser.add_argument(
        "--commit",
        metavar="REV",
        help="test this commit's files (e.g. HEAD) instead of the working tree's",
    )
    args = parser.parse_args()
    if args.max_children < 1:
        parser.error("--max-children must be at least 1")
    report_path = args.report.resolve() if args.report else None
    selected = set(args.modules or [])

    def load_selected() -> dict[str, dict[str, int | None]]:
        results = load_results()
        return {s: r for s, r in results.items() if not selected or module_of(s) in selected}

    if not args.no_run:
        fresh = not (args.retest or args.resume)
        build_workspace(fresh=fresh, commit=args.commit)
        names = []
        if args.retest:
            forget_test_coverage()
            table = classify(load_selected())
            names = [  # message-only and judged ones too: a new test may kill them
                entry[0]
                for rows in table.values()
                for outcome in ("survived", "no tests", "other", "message", "equivalent")
                for entry in rows.get(outcome, [])
            ]
            if not names:
                print("No survivors to retest.")
        elif selected and args.resume:  # mutmut reruns every mutant named: only the unrun
            results = load_selected()
            names = [name for codes in results.values() for name, c in codes.items() if c is None]
            names += [mutant_pattern(m) for m in sorted(selected - set(map(module_of, results)))]
            if not names:
                print("Every mutant of these modules has run.")
        elif selected:
            names = [mutant_pattern(module) for module in sorted(selected)]
        if names or not (args.retest or (selected and args.resume)):
            run_mutmut(names, args.max_children)
    os.chdir(WORKSPACE)  # mutmut's helpers read its configuration from the current folder
    text = report(classify(load_selected()))
    print(text)
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(text)


if __name__ == "__main__":
    main()
