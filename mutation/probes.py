"""Probe every mutant the gate does not count: do the judged ones really behave the same?

``mutation/score.py`` leaves two kinds of surviving mutants out of a module's score:
the *message-only* ones (the change is inside a raised exception's arguments or a warning's
strings) and the ones *judged equivalent* (``mutation/judged*.py``, each with its
proof). A proof can be wrong: a missing ``encoding=`` is harmless in a UTF-8 locale and a
``UnicodeDecodeError`` in ``LC_ALL=C``; a dropped ``dtype=`` changes nothing for the inputs its
author thought of. So each such mutant is run: the probe registered for its function
(``PROBES`` in ``mutation/probes_*.py``) is called under the original and under the
mutant, each in its own forked process and empty folder, and what a caller could observe is
compared: the return value with its types (``probe_kit.observe``), the type of the
exception raised, the categories of the warnings, the files written. Twice: in a UTF-8 locale and
in the C locale (ASCII, UTF-8 mode off). A probe must also *reach* each mutant: the lines the
mutant changes run (traced in the mutant's own function), or the comparison proves nothing.

Reads the mutants and their outcomes from the gate's workspace (``.mutation/``, after
``score.py``): the message-only survivors, and every generated mutant a judgement of
equivalence matches, run or not (an equivalent mutant behaves as the original whatever the
tests did); lists the judgements that match no mutant, which are stale and must go. Not run by
CI (it needs the workspace).

    python mutation/probes.py --report mutation/results/probes.md
    python mutation/probes.py --modules config report.text   # only these modules
    python mutation/probes.py --list   # the mutants to probe, by function
"""

from __future__ import annotations

import argparse
import ast
import codecs
import difflib
import hashlib
import importlib
import importlib.util
import json
import locale
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from judged import EQUIVALENT, JUDGED, Judged
from probe_kit import observe
from score import (
    WORKSPACE,
    changed_code,
    classify,
    function_code,
    load_results,
    module_of,
    mutant_pattern,
)

TOOLS = Path(__file__).resolve().parent
#: The two locales every probe runs in: their environment and the encoding Python must see.
LOCALES = {
    "UTF-8": ({"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}, "utf-8"),
    "C": ({"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}, "ascii"),
}
#: Seconds one variant may run before it is stopped (and reads as a changed behaviour).
VARIANT_TIMEOUT = 120


def all_probes() -> dict[str, Callable[[Path], Any]]:
    """Every registered probe, by the mutmut name of the function it probes."""
    probes: dict[str, Callable[[Path], Any]] = {}
    for path in sorted(TOOLS.glob("probes_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        overlap = probes.keys() & module.PROBES.keys()
        if overlap:
            raise ValueError(f"{path.name} probes {sorted(overlap)} again")
        probes.update(module.PROBES)
    return probes


# -- the parent: which mutants, and what their probes showed --------------------------------


def judged_mutants(
    results: dict[str, dict[str, int | None]],
) -> dict[Judged, list[tuple[str, str]]]:
    """Every generated mutant each judgement matches, run or not: ``{judgement: [(mutant,
    mutated file), ...]}``. An equivalent mutant behaves as the original whatever the tests
    did with it, so a judgement is probed on all it matches; one that matches none is stale."""
    import libcst as cst

    by_function: dict[str, list[Judged]] = defaultdict(list)
    for judgement in JUDGED:
        by_function[judgement.function].append(judgement)
    matches: dict[Judged, list[tuple[str, str]]] = {j: [] for j in JUDGED}
    for source, codes in results.items():
        module = None
        for name in codes:
            judgements = by_function.get(name.partition("__mutmut_")[0], [])
            if not judgements:
                continue
            if module is None:
                module = cst.parse_module((WORKSPACE / "mutants" / source).read_text())
            change = changed_code(*function_code(module, name))
            for j in judgements:
                if (j.before, j.after) in (change, (None, None)):
                    matches[j].append((name, source))
    return matches


def mutants_to_probe(
    table: dict[str, dict[str, list]], judged: dict[Judged, list[tuple[str, str]]]
) -> dict[str, list[tuple[str, str, str]]]:
    """``{function: [(mutant, "message" | "equivalent", mutated file), ...]}``: the surviving
    message-only mutants, and every mutant a judgement of equivalence matches."""
    wanted: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for source, rows in table.items():
        for entry in rows.get("message", []):
            wanted[entry[0].partition("__mutmut_")[0]].append((entry[0], "message", source))
    for judgement, mutants in judged.items():
        if judgement.category == EQUIVALENT:
            for name, source in mutants:
                wanted[judgement.function].append((name, "equivalent", source))
    return dict(wanted)


def changed_lines(source: str, mutant: str) -> list[tuple[int, int]]:
    """The line spans (first, last) of the statements ``mutant`` changes in its mutated file."""
    path = WORKSPACE / "mutants" / source
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    name = mutant.rpartition(".")[2]
    original_name = name.partition("__mutmut_")[0] + "__mutmut_orig"
    nodes = {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name in (name, original_name)
    }
    original, mutated = (
        ast.get_source_segment(text, nodes[n]) or "" for n in (original_name, name)
    )
    mutated = mutated.replace(name, original_name, 1)  # the def line's name always differs
    mutated_lines = mutated.splitlines()
    changed = set()
    matcher = difflib.SequenceMatcher(None, original.splitlines(), mutated_lines, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(j1, max(j2, j1 + 1)))
    function = nodes[name]
    body = function.body[0].lineno
    absolute = {function.lineno + index for index in changed if index < len(mutated_lines)}
    spans = []
    if any(line < body for line in absolute):  # the signature (a default): any call reaches it
        spans.append((body, function.end_lineno or body))
    for line in sorted(line for line in absolute if line >= body):
        statements = [
            node
            for node in ast.walk(function)
            if isinstance(node, ast.stmt)
            and node is not function
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ]
        innermost = min(
            statements, key=lambda s: (s.end_lineno or s.lineno) - s.lineno, default=None
        )
        spans.append((innermost.lineno, innermost.end_lineno) if innermost else (line, line))
    return spans


def run_child(function: str, mutants: list[str], locale_name: str) -> dict[str, Any]:
    """The child's observations of the original (``""``) and each mutant, in one locale."""
    extra, _ = LOCALES[locale_name]
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANGUAGE", "LC_CTYPE")
    }
    env.update(extra)
    mutants_dir = WORKSPACE / "mutants"
    env["PYTHONPATH"] = os.pathsep.join(
        str(p)
        for p in (
            mutants_dir / "src",
            mutants_dir,
            mutants_dir / "benchmarks",
            mutants_dir / "docs" / "generators",
            TOOLS,
        )
    )
    env.update({k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "observations.json"
        command = [sys.executable, __file__, "--child", function, str(out), *mutants]
        run = subprocess.run(command, cwd=mutants_dir, env=env, capture_output=True, text=True)
        if run.returncode != 0 or not out.exists():
            return {"error": (run.stderr or run.stdout)[-1500:]}
        return json.loads(out.read_text())


def probe_function(
    function: str, entries: list[tuple[str, str, str]], has_probe: bool
) -> list[dict[str, Any]]:
    """One row per mutant of ``function``: its kind and, per locale, same / reached / why not."""
    rows = [{"mutant": m, "kind": k, "source": s} for m, k, s in entries]
    if not has_probe:
        for row in rows:
            row["problem"] = "no probe"
        return rows
    mutants = [m for m, _, _ in entries]
    for locale_name, (_, encoding) in LOCALES.items():
        seen = run_child(function, mutants, locale_name)
        if "error" in seen:
            for row in rows:
                row.setdefault("problem", f"probe failed under {locale_name}: {seen['error']}")
            continue
        if seen["encoding"] != encoding:
            raise RuntimeError(f"the {locale_name} run saw {seen['encoding']}, not {encoding}")
        original = seen["variants"][""]
        for row in rows:
            variant = seen["variants"][row["mutant"]]
            spans = changed_lines(row["source"], row["mutant"])
            reached = any(a <= line <= b for a, b in spans for line in variant["lines"])
            same = all(variant[k] == original[k] for k in ("outcome", "warnings", "files"))
            row[locale_name] = {"same": same, "reached": reached}
            if not reached:
                row.setdefault("problem", f"the probe does not reach the change ({locale_name})")
            elif not same:
                differs = [k for k in ("outcome", "warnings", "files") if variant[k] != original[k]]
                row.setdefault(
                    "problem",
                    f"behaves differently under {locale_name}: {', '.join(differs)} "
                    f"({json.dumps(original[differs[0]])[:200]} -> "
                    f"{json.dumps(variant[differs[0]])[:200]})",
                )
    return rows


def markdown(rows: list[dict[str, Any]], stale: list[Judged], seconds: float, command: str) -> str:
    """The report: a table per module, then every problem and every stale judgement."""
    by_module: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_module[row["source"].removeprefix("src/")].append(row)
    lines = [
        "# Probes of the mutants the gate does not count",
        "",
        f"`{command}`: {len(rows)} mutants (message-only and judged equivalent), each run "
        f"under the original and the mutant in a UTF-8 and a C locale, in {seconds / 60:.1f} "
        "minutes. A mutant passes when its probe reaches the lines it changes and the return "
        "value (with its types), exception type, warning categories and files written are "
        "those of the original, in both locales.",
        "",
        "| module | message-only | judged equivalent | pass | no probe | not reached | differs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for module, module_rows in sorted(by_module.items()):
        problems = [r.get("problem", "") for r in module_rows]
        cells = [
            sum(r["kind"] == "message" for r in module_rows),
            sum(r["kind"] == "equivalent" for r in module_rows),
            sum(not p for p in problems),
            sum(p == "no probe" for p in problems),
            sum(p.startswith("the probe does not reach") for p in problems),
            sum(p.startswith(("behaves", "probe failed")) for p in problems),
        ]
        lines.append(f"| {module} | " + " | ".join(map(str, cells)) + " |")
    failing = [r for r in rows if r.get("problem")]
    lines += ["", f"## Problems ({len(failing)})", ""]
    lines += [f"- `{r['mutant']}` ({r['kind']}): {r['problem']}" for r in failing]
    lines += ["", f"## Judgements that match no mutant (stale: remove them) ({len(stale)})", ""]
    lines += [f"- `{j.function}`: `{j.before}` -> `{j.after}`" for j in stale]
    return "\n".join(lines) + "\n"


# -- the child: one locale, the original and each mutant in a forked process -----------------


def _observe_variant(probe: Callable[[Path], Any], variant: str, code_name: str) -> dict[str, Any]:
    """Run ``probe`` with ``variant`` switched on, in a fresh folder; what it showed."""
    from mutmut.mutation import trampoline

    try:
        os.environ["MUTANT_UNDER_TEST"] = variant  # for any subprocess the probe starts
    except UnicodeEncodeError:  # xǁClassǁf in the C locale: the environment holds ASCII only
        os.environ.pop("MUTANT_UNDER_TEST", None)
    # The trampoline reads the environment first, else its process-local copy (mutmut 3.8).
    trampoline._mutant_under_test = variant
    folder = Path(tempfile.mkdtemp())
    os.chdir(folder)
    lines: set[int] = set()

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            lines.add(frame.f_lineno)
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        """The mutant's own frames and those of the functions defined inside it."""
        qualname = getattr(frame.f_code, "co_qualname", "")  # Python 3.11+
        inside = frame.f_code.co_name == code_name or f"{code_name}.<locals>." in qualname
        return local if inside else None

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.settrace(calls if variant else None)
        try:
            outcome = ["returned", observe(probe(folder))]
        except BaseException as error:  # SystemExit too: a command's refusal
            outcome = ["raised", f"{type(error).__module__}.{type(error).__qualname__}"]
        finally:
            sys.settrace(None)
    files = sorted(
        [p.relative_to(folder).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest()]
        for p in folder.rglob("*")
        if p.is_file()
    )
    categories = [f"{w.category.__module__}.{w.category.__qualname__}" for w in caught]
    return {"outcome": outcome, "warnings": categories, "files": files, "lines": sorted(lines)}


def child(function: str, out: Path, mutants: list[str]) -> None:
    """Observe the original and each mutant of ``function``; write them to ``out`` as JSON."""
    # The scripts (and the names plugin) from the workspace, mutated, not from the repository;
    # the probes' own helpers from beside this file, last.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != TOOLS] + [str(TOOLS)]
    importlib.import_module("mutation.names")  # benchmark scripts under their mutants' names

    probe = all_probes()[function]
    importlib.import_module(function.rpartition(".")[0])  # imported once, before the forks
    variants: dict[str, Any] = {}
    for variant in ["", *mutants]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the variant's own process: nothing it changes outlives it
            os.close(read)
            try:
                seen = _observe_variant(probe, variant, variant.rpartition(".")[2])
                os.write(write, json.dumps(seen).encode())
            finally:
                os._exit(0)
        os.close(write)
        data, deadline = b"", time.monotonic() + VARIANT_TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([read], [], [], deadline - time.monotonic())
            chunk = os.read(read, 1 << 16) if ready else b""
            if not chunk:
                break
            data += chunk
        else:
            os.kill(pid, signal.SIGKILL)
        os.close(read)
        os.waitpid(pid, 0)
        stopped = {"outcome": ["stopped"], "warnings": [], "files": [], "lines": []}
        variants[variant] = json.loads(data) if data else stopped
    encoding = codecs.lookup(locale.getpreferredencoding(False)).name
    out.write_text(json.dumps({"encoding": encoding, "variants": variants}))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        # The C locale decodes arguments as ASCII (with surrogates): names like xǁVerifierǁf
        # come back from their bytes, which the parent wrote in UTF-8.
        function, out, *mutants = (os.fsencode(a).decode("utf-8") for a in sys.argv[2:])
        child(function, Path(out), mutants)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", metavar="MODULE", help="only these modules")
    parser.add_argument("--report", type=Path, help="also write the report (markdown) here")
    parser.add_argument("--list", action="store_true", help="list the mutants to probe and stop")
    parser.add_argument(
        "--jobs", type=int, default=1, help="functions probed at once (a core each)"
    )
    args = parser.parse_args()
    report_path = args.report.resolve() if args.report else None
    start = time.monotonic()
    os.chdir(WORKSPACE)  # mutmut's helpers read its configuration from the current folder
    results = load_results()
    if args.modules:
        results = {s: r for s, r in results.items() if module_of(s) in set(args.modules)}
    table = classify(results)
    prefixes = tuple(mutant_pattern(module_of(s)).removesuffix("*") for s in results)
    judged = {j: m for j, m in judged_mutants(results).items() if j.function.startswith(prefixes)}
    wanted = mutants_to_probe(table, judged)
    probes = all_probes()
    if args.list:
        for function, entries in sorted(wanted.items()):
            mark = "" if function in probes else "  (no probe)"
            print(f"{function}{mark}")
            print("".join(f"    {m.rpartition('.')[2]} {k}\n" for m, k, _ in entries), end="")
        return
    functions = sorted(wanted.items())
    with ThreadPoolExecutor(args.jobs) as pool:  # each function's probes in child processes
        done = pool.map(lambda item: probe_function(*item, item[0] in probes), functions)
        rows = []
        for index, ((function, entries), function_rows) in enumerate(
            zip(functions, done, strict=True), 1
        ):
            print(f"[{index}/{len(functions)}] {function} ({len(entries)})", file=sys.stderr)
            rows += function_rows
    command = "python mutation/probes.py" + (
        f" --modules {' '.join(args.modules)}" if args.modules else ""
    )
    stale = [j for j, mutants in judged.items() if not mutants]
    text = markdown(rows, stale, time.monotonic() - start, command)
    print(text)
    if report_path:
        report_path.write_text(text)
    if any(r.get("problem") for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
