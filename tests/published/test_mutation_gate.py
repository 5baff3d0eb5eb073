"""The mutation gate's own tools (``mutation/*.py``), which CI cannot run whole (a
gate run takes an hour): what a probe observes, which lines a mutant changes, the plugin that
imports gated scripts under their mutants' names, and a probe for every judgement."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "mutation"))

from probe_kit import each, observe  # noqa: E402


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (np.zeros(3, dtype=np.float32), np.zeros(3, dtype=np.float64)),  # the dtype
        (np.arange(3, dtype=np.int64), np.arange(3, dtype=np.uint64)),
        (np.zeros((2, 3)), np.zeros((3, 2))),  # the shape
        (np.array([0.1, 0.2]), np.array([0.1, 0.2 + 2**-54])),  # one bit
        (0.0, -0.0),  # equal under ==, not the same float
        (1, 1.0),  # equal under ==, not the same type
        (1, True),
        (np.float64(1.0), 1.0),
        ({"a": 1}, {"a": 1.0}),
        ([1, 2], (1, 2)),
        ("a", b"a"),
    ],
)
def test_observe_tells_apart_what_equality_would_not(one, other):
    assert observe(one) != observe(other)
    assert observe(one) == observe(one)


def test_observe_reads_nan_and_sets_and_dataclasses_by_content():
    @dataclass
    class Point:
        x: float
        y: np.ndarray

    assert observe(float("nan")) == observe(float("nan"))
    assert observe({3, 1, 2}) == observe({1, 2, 3})
    assert observe(Point(1.0, np.ones(2))) == observe(Point(1.0, np.ones(2)))
    assert observe(Point(1.0, np.ones(2))) != observe(Point(1.0, np.ones(2, dtype=np.float32)))


def test_each_records_values_exception_types_and_warning_categories():
    def warns() -> int:
        warnings.warn("careful", RuntimeWarning, stacklevel=1)
        return 1

    seen = each(lambda: 2, lambda: int("x"), warns, lambda: {}["k"])
    assert seen == [
        ["returned", observe(2), []],
        ["raised", "builtins.ValueError", []],
        ["returned", observe(1), ["builtins.RuntimeWarning"]],
        ["raised", "builtins.KeyError", []],
    ]


MUTATED = """\
def x_f__mutmut_orig(a):
    if a > 0:
        return a + 1
    return 0

def x_f__mutmut_1(a):
    if a > 0:
        return a - 1
    return 0

def x_f__mutmut_2(a):
    if a >= 0:
        return a + 1
    return 0
"""


def test_changed_lines_are_the_statements_a_mutant_changes(tmp_path, monkeypatch):
    import probes

    (tmp_path / "mutants" / "src").mkdir(parents=True)
    (tmp_path / "mutants" / "src" / "m.py").write_text(MUTATED)
    monkeypatch.setattr(probes, "WORKSPACE", tmp_path)
    assert probes.changed_lines("src/m.py", "m.x_f__mutmut_1") == [(8, 8)]
    # the condition's line: the whole if statement (its test runs whichever branch is taken)
    assert probes.changed_lines("src/m.py", "m.x_f__mutmut_2") == [(12, 13)]


def test_a_variant_is_observed_with_the_lines_it_ran_and_the_files_it_wrote(tmp_path):
    """The runner's observation of one variant, in a child process (it changes folder and
    environment): a mutant that writes another file and warns differently is seen to."""
    code = textwrap.dedent(
        f"""
        import json, os, sys, types, warnings
        sys.path.insert(0, {str(ROOT / "mutation")!r})
        for name in ("mutmut", "mutmut.mutation", "mutmut.mutation.trampoline"):
            sys.modules.setdefault(name, types.ModuleType(name))  # CI installs no mutmut
        sys.modules["mutmut.mutation"].trampoline = sys.modules["mutmut.mutation.trampoline"]
        from probes import _observe_variant

        def x_g__mutmut_1(folder):
            warnings.warn("w", UserWarning)
            def write():  # a function defined inside the mutant: its lines count too
                (folder / "out.txt").write_text("one")
            write()
            return 1

        def probe(folder):
            if os.environ["MUTANT_UNDER_TEST"]:
                return x_g__mutmut_1(folder)
            (folder / "out.txt").write_text("two")
            return 1

        print(json.dumps([_observe_variant(probe, v, "x_g__mutmut_1") for v in ("", "m.x_g__mutmut_1")]))
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    import json

    original, mutant = json.loads(run.stdout.splitlines()[-1])
    assert original["outcome"] == mutant["outcome"] == ["returned", observe(1)]
    assert original["warnings"] == [] and mutant["warnings"] == ["builtins.UserWarning"]
    assert original["files"][0][0] == mutant["files"][0][0] == "out.txt"
    assert original["files"][0][1] != mutant["files"][0][1]  # the content's hash
    assert original["lines"] == []  # nothing traced for the original
    # the mutant's four lines ran, and the line of the function defined inside it
    assert len(mutant["lines"]) == 5


def test_gated_scripts_get_their_mutants_module_name_and_keep_their_own(tmp_path):
    """A script of a gated folder (loaded from its file, or imported with its folder on the
    path) runs under its mutants' name; a module elsewhere keeps its own."""
    studies, generators = tmp_path / "benchmarks", tmp_path / "docs" / "generators"
    for folder, name in ((studies, "study"), (generators, "block"), (tmp_path, "elsewhere")):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.py").write_text("def render():\n    return 1\n")
    code = textwrap.dedent(
        f"""
        import importlib.util, sys
        from pathlib import Path
        sys.path.insert(0, {str(ROOT)!r})
        import mutation.names
        mutation.names.SCRIPT_FOLDERS = {{
            Path({str(studies)!r}): "benchmarks", Path({str(generators)!r}): "docs.generators"
        }}
        spec = importlib.util.spec_from_file_location("benchmark_study", {str(studies / "study.py")!r})
        study = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = study
        spec.loader.exec_module(study)
        sys.path[:0] = [{str(generators)!r}, {str(tmp_path)!r}]
        import block, elsewhere
        for module in (study, block, elsewhere):
            print(module.__name__, module.render.__module__)
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "benchmark_study benchmarks.study",
        "block docs.generators.block",
        "elsewhere elsewhere",
    ]


def test_every_equivalence_judgement_has_a_probe():
    from judged import EQUIVALENT, JUDGED
    from probes import all_probes

    probes = all_probes()
    missing = sorted({j.function for j in JUDGED if j.category == EQUIVALENT} - probes.keys())
    assert not missing, f"judged equivalent without a probe: {missing}"


def test_a_changed_default_is_reached_by_any_call(tmp_path, monkeypatch):
    import probes

    (tmp_path / "mutants").mkdir()
    (tmp_path / "mutants" / "m.py").write_text(
        "def x_h__mutmut_orig(a, b='x'):\n    return a\n\n"
        "def x_h__mutmut_1(a, b='XXxXX'):\n    return a\n"
    )
    monkeypatch.setattr(probes, "WORKSPACE", tmp_path)
    assert probes.changed_lines("m.py", "m.x_h__mutmut_1") == [(5, 5)]


def test_the_workspace_holds_a_commits_files_in_the_installed_layout(tmp_path, monkeypatch):
    """``--commit`` copies the committed files, not the working tree's edits; a file only in the
    working tree stays out; the package lands under ``src/`` with ``trainers`` inside it."""
    import score

    repo = tmp_path / "repo"
    files = {
        "pyproject.toml": '[tool.mutmut]\nonly_mutate = ["src/waterdrum_hf/core.py"]\n',
        "waterdrum_hf/core.py": "VALUE = 1\n",
        "trainers/losses.py": "LOSS = 1\n",
        "tests/test_core.py": "def test(): pass\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (repo / "waterdrum_hf/core.py").write_text("VALUE = 2\n")  # an edit not committed
    (repo / "tests/test_half_written.py").write_text("def test(:\n")
    git("add", "tests/test_half_written.py")  # tracked, not committed
    monkeypatch.setattr(score, "ROOT", repo)
    monkeypatch.setattr(score, "WORKSPACE", tmp_path / "workspace")

    score.build_workspace(fresh=True, commit="HEAD")
    workspace = tmp_path / "workspace"
    assert (workspace / "src/waterdrum_hf/core.py").read_text() == "VALUE = 1\n"
    assert (workspace / "src/waterdrum_hf/trainers/losses.py").read_text() == "LOSS = 1\n"
    assert (workspace / "tests/test_core.py").exists()
    assert not (workspace / "tests/test_half_written.py").exists()
    assert not (workspace / "waterdrum_hf").exists()

    score.build_workspace(fresh=True)  # the working tree's tracked files
    assert (workspace / "src/waterdrum_hf/core.py").read_text() == "VALUE = 2\n"
    assert (workspace / "tests/test_half_written.py").exists()

    # mutmut's copies: a data file is refreshed, a Python file is left to mutmut
    (repo / "results.md").write_text("first\n")
    git("add", "results.md")
    copies = (("results.md", "first\n"), ("src/waterdrum_hf/trainers/losses.py", "LOSS = 1\n"))
    for name, text in copies:
        (workspace / "mutants" / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / "mutants" / name).write_text(text)
    (repo / "results.md").write_text("second\n")
    (repo / "trainers/losses.py").write_text("LOSS = 2\n")
    score.build_workspace(fresh=False)
    assert (workspace / "mutants/results.md").read_text() == "second\n"
    assert (workspace / "mutants/src/waterdrum_hf/trainers/losses.py").read_text() == "LOSS = 1\n"


_HEADER = (
    "| module | mutants | killed | timeout | message-only | equivalent | survived | no tests "
    "| not checked | score |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
)


def _area_report(path: Path, rows: list[str], current: bool = True) -> None:
    marker = "<!-- current -->\n" if current else ""
    path.write_text(
        "# an area\n\nold:\n\n"
        + _HEADER
        + "| m/old.py | 1 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0.0 % |\n\n"
        + marker
        + _HEADER
        + "".join(row + "\n" for row in rows)
        + "| **all** | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - |\n\nafter\n"
    )


def test_the_summary_reads_each_modules_current_row(tmp_path):
    """Only the table after the marker counts; rows come in only_mutate's order; the score is
    (killed + timeout) over mutants less message-only, equivalent and not checked."""
    from summary import gather, render

    # m/a.py: (90 + 2) / (120 - 10 - 5 - 10) = 92 / 95 = 96.8 %, below the bar
    _area_report(
        tmp_path / "mutation_one.md", ["| m/a.py | 120 | 90 | 2 | 10 | 5 | 3 | 0 | 10 | 96.8 % |"]
    )
    _area_report(
        tmp_path / "mutation_two.md",
        [
            "| m/b.py | 10 | 9 | 0 | 1 | 0 | 0 | 0 | 0 | 100.0 % |",
            "| m/c.py | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - |",
        ],
    )
    _area_report(
        tmp_path / "mutation_history.md",
        ["| m/old.py | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 100.0 % |"],
        current=False,
    )
    rows, missing = gather(tmp_path, ["m/b.py", "m/a.py", "m/c.py", "m/old.py"])
    assert [(r.module, r.report, r.score) for r in rows] == [
        ("m/b.py", "mutation_two.md", 100.0),
        ("m/a.py", "mutation_one.md", pytest.approx(100 * 92 / 95)),
        ("m/c.py", "mutation_two.md", None),
    ]
    assert missing == ["m/old.py"]
    text = render(rows, missing)
    assert (
        "| m/a.py | 120 | 92 | 10 | 5 | 10 | 3 | 0 | 96.8 % | [mutation_one.md](mutation_one.md) |"
        in text
    )
    assert "Below 97 %: m/a.py." in text and "Without a current table: m/old.py." in text


@pytest.mark.parametrize(
    ("rows", "modules", "error"),
    [
        (
            ["| m/a.py | 10 | 9 | 0 | 1 | 0 | 0 | 0 | 0 | 90.0 % |"],
            ["m/a.py"],
            "reads 90.0 %",
        ),  # a hand edit
        (
            ["| m/z.py | 10 | 9 | 0 | 1 | 0 | 0 | 0 | 0 | 100.0 % |"],
            ["m/a.py"],
            "not in only_mutate",
        ),
    ],
)
def test_the_summary_refuses_a_row_it_cannot_trust(tmp_path, rows, modules, error):
    from summary import gather

    _area_report(tmp_path / "mutation_one.md", rows)
    with pytest.raises(ValueError, match=error):
        gather(tmp_path, modules)


def test_the_summary_refuses_two_current_rows_for_one_module(tmp_path):
    from summary import gather

    row = "| m/a.py | 10 | 9 | 0 | 1 | 0 | 0 | 0 | 0 | 100.0 % |"
    _area_report(tmp_path / "mutation_one.md", [row])
    _area_report(tmp_path / "mutation_two.md", [row])
    with pytest.raises(ValueError, match="mutation_one.md and in mutation_two.md"):
        gather(tmp_path, ["m/a.py"])


def test_the_committed_summary_is_the_reports_current_rows():
    """``summary.md`` is regenerated whenever an area report or only_mutate changes."""
    from summary import SUMMARY, gather, render

    assert SUMMARY.read_text(encoding="utf-8") == render(*gather())


def test_mutants_a_stopped_run_never_reached_count_against_the_score(tmp_path):
    """A table with the "not run" column: (6 + 0) / (12 - 1 - 1 - 0) = 60 %, not 6 / 6."""
    from score import _row
    from summary import gather

    counts = Counter({"mutants": 12, "killed": 6, "message": 1, "equivalent": 1, "not run": 4})
    row = _row("m/a.py", counts)
    assert row == "| m/a.py | 12 | 6 | 0 | 1 | 1 | 0 | 0 | 0 | 4 | 60.0 % |"
    header = _HEADER.replace("| not checked | score |", "| not checked | not run | score |")
    (tmp_path / "mutation_one.md").write_text(
        "<!-- current -->\n" + header.replace("|---:|\n", "|---:|---:|\n") + row + "\n"
    )
    (found,), _ = gather(tmp_path, ["m/a.py"])
    assert found.counts["not run"] == 4 and found.score == 60.0


def test_a_moved_modules_row_is_read_under_its_new_path(tmp_path, monkeypatch):
    """A row measured before a move (``MOVED``) counts for the module's new path and says
    where it was measured; without the entry it would be refused as not in only_mutate."""
    import summary
    from summary import gather, render

    monkeypatch.setattr(summary, "MOVED", {"m/old.py": "m/new/old.py"})
    _area_report(
        tmp_path / "mutation_one.md", ["| m/old.py | 10 | 10 | 0 | 0 | 0 | 0 | 0 | 0 | 100.0 % |"]
    )
    (row,), missing = gather(tmp_path, ["m/new/old.py"])
    assert (row.module, row.measured_as, missing) == ("m/new/old.py", "m/old.py", [])
    assert "| m/new/old.py (measured as m/old.py) | 10 | 10 |" in render([row], [])
