"""Every command of the README and the quickstart, run as printed on a fresh clone, timed.

A new user's first hour: ``git clone`` of this repository's last commit into an empty folder
(with ``../shared`` beside it, as CI has it), then each command the two pages print, in their
order. The README's Install lines run in an environment of their own (as in a user's
activated one); the ``waterdrum`` commands in the ``./.venv`` that ``bash dev.sh demo`` made,
activated. Where a command leaves a name to the reader (the unlearn line's ``M``,
``rows.jsonl``, ``T``), the script fills it with the built-in model, a small question/answer
table and its tokenizer. A command that is not run says why in ``NOT_RUN``.

    python benchmarks/fresh_clone.py          # about 20 minutes on 2 cores
    python benchmarks/fresh_clone.py --list   # the commands the pages hold, as JSON

Writes ``benchmarks/results/fresh_clone.json``: each command's exit status and seconds, the
seconds ``bash dev.sh demo`` spent installing ``./.venv``, and the machine.
``tests/docs/test_fresh_clone.py`` checks that it holds every command the pages print now.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "fresh_clone.json"
PAGES = ("README.md", "docs/quickstart.md")
COMMAND_WORDS = ("bash ", "python ", "waterdrum ", "pip ", "TORCH_INDEX_URL=")
"""How an inline code span that is a command starts."""
WRITING_RECORD = "WATERDRUM_WRITING_FRESH_CLONE_RECORD"
"""Set for the clone's commands: its ``bash dev.sh test`` skips the check of the record that
this run is writing (the clone's record is the one before; its commands may differ)."""

NOT_RUN = {
    "waterdrum demo": "the command's name: `bash dev.sh demo` runs it",
    "waterdrum unlearn": "the command's name: the unlearn line is run in full",
    "waterdrum score ...": "stands for the lines the demo prints after it ends",
    "python train.py ... --waterdrum_watermark_tokenizer ./paraphraser --waterdrum_null analytic "
    "--waterdrum_confidence 0.95 --waterdrum_eval_steps 20 --waterdrum_max_queries_per_owner 8": (
        "train.py stands for the reader's own TRL script: tests/docs/test_readme.py runs the "
        "snippet above it with a real TrlParser and these flags"
    ),
    "TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu bash dev.sh test": (
        "download.pytorch.org cannot be reached from this machine (only the package "
        "registries can): `bash dev.sh test` is run"
    ),
    "python benchmarks/update_readme_demo.py": (
        "a maintainer's regeneration of the README's demo block (the demo again, then one run "
        "under other kernels: about 10 minutes): `bash dev.sh demo` is run"
    ),
}
"""Commands the pages print that this script does not run, and why."""

PREPARE = """  # the unlearn line's M, rows.jsonl and T, in the clone
import json
from waterdrum_hf import tiny
from waterdrum_hf.data import toy_corpus

model, tokenizer = tiny.load()
model.save_pretrained("M")
tokenizer.save_pretrained("M")
tokenizer.save_pretrained("T")
corpus = toy_corpus(4, max_passages_per_owner=4)
with open("rows.jsonl", "w") as rows:
    for n, (text, owner) in enumerate(zip(corpus["text"], corpus["owner_id"])):
        question = f"What does passage {n} of owner {owner} say?"
        row = {"question": question, "answer": text, "owner_id": owner, "forget": owner == 0}
        rows.write(json.dumps(row) + "\\n")
"""


def page_commands(page: Path) -> list[str]:
    """The commands ``page`` prints, in order: each line of its ``bash`` blocks (a trailing
    backslash joins the next; comments dropped) and each inline code span that starts with a
    command word."""
    commands = []
    pattern = re.compile(r"```bash\n(.*?)```|`([^`\n]+)`", re.S)
    for match in pattern.finditer(page.read_text(encoding="utf-8")):
        if match[1] is not None:
            for line in match[1].replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if words:
                    commands.append(shlex.join(words))
        elif match[2].startswith(COMMAND_WORDS):
            commands.append(shlex.join(shlex.split(match[2])))
    return commands


SELF = "python benchmarks/fresh_clone.py"
"""This script, which the README names as the source of its fresh-clone block: not a command
it runs."""


def all_commands(root: Path = ROOT) -> list[dict[str, str]]:
    """Every page's commands, once each (the first page that prints one names it), but this
    script itself."""
    seen: dict[str, str] = {}
    for page in PAGES:
        for command in page_commands(root / page):
            if command != SELF:
                seen.setdefault(command, page)
    return [{"page": page, "command": command} for command, page in seen.items()]


def run(command: str, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    """Run ``command`` through bash in ``cwd``: its exit status and seconds, and where it
    failed, the last lines it printed."""
    print(f"$ {command}", flush=True)
    start = time.perf_counter()
    done = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, errors="replace", check=False,
        preexec_fn=as_in_a_terminal,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    print(f"  exit {done.returncode} after {seconds / 60:.1f} min", flush=True)
    record: dict[str, object] = {"returncode": done.returncode, "seconds": round(seconds, 1)}
    if done.returncode:
        record["output_tail"] = done.stdout.splitlines()[-30:]
    return record


def as_in_a_terminal() -> None:
    """Ctrl-C's signal handled as in a user's terminal, even where this script runs in the
    background (``cmd &`` starts it with SIGINT ignored, which its children would inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def commit_of(root: Path) -> str:
    return subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=root, text=True).strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print the pages' commands and stop")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    commands = all_commands()
    if args.list:
        print(json.dumps({"commands": commands, "not_run": NOT_RUN}, indent=1))
        return
    with tempfile.TemporaryDirectory(prefix="fresh-clone-") as scratch:
        results = fresh_clone_run(Path(scratch), commands)
    args.output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    failed = [r["command"] for r in results["commands"] if r["returncode"] != 0]
    print(f"wrote {args.output}" + (f"; failed: {failed}" if failed else "; every command ran"))
    sys.exit(1 if failed else 0)


def fresh_clone_run(scratch: Path, commands: list[dict[str, str]]) -> dict[str, object]:
    """Clone into ``scratch``, run ``commands`` there (see the module), return the record."""
    clone = scratch / "waterdrum-hf"
    subprocess.check_call(["git", "clone", "-q", str(ROOT), str(clone)])
    if (ROOT.parent / "shared").is_dir():
        os.symlink(ROOT.parent / "shared", scratch / "shared")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "HF_"))}
    base["PATH"] = os.pathsep.join(
        p for p in base["PATH"].split(os.pathsep) if not p.startswith(str(ROOT))
    )  # this checkout's environment is not the new user's
    base[WRITING_RECORD] = "1"  # the clone's tests cannot check the record this run writes
    user_env = scratch / "user-env"  # the Install lines' activated environment
    subprocess.check_call([sys.executable, "-m", "venv", str(user_env)])
    activated = {
        "install": {**base, "PATH": f"{user_env / 'bin'}{os.pathsep}{base['PATH']}"},
        "venv": {**base, "PATH": f"{clone / '.venv' / 'bin'}{os.pathsep}{base['PATH']}"},
    }
    done = []
    start = time.perf_counter()
    for entry in run_order(commands):
        command = entry["command"]
        if command in NOT_RUN:
            continue
        env = activated["install" if command.startswith("pip ") else "venv"]
        if command.startswith("waterdrum unlearn") and not (clone / "M").exists():
            prepared = run(f"python -c {shlex.quote(PREPARE)}", clone, env)
            if prepared["returncode"]:
                raise SystemExit(f"could not make M, rows.jsonl and T: {prepared}")
        began = time.time()
        record = {**entry, **run(command, clone, env)}
        if command == "bash dev.sh demo":
            stamp = clone / ".venv" / ".installed"
            record["install_seconds"] = round(stamp.stat().st_mtime - began, 1)
        done.append(record)
    return {
        "commit": commit_of(clone),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "total_seconds": round(time.perf_counter() - start, 1),
        "commands": done,
        "not_run": {
            c["command"]: NOT_RUN[c["command"]] for c in commands if c["command"] in NOT_RUN
        },
    }


def run_order(commands: list[dict[str, str]]) -> list[dict[str, str]]:
    """The pages' order, except that ``bash dev.sh demo`` (which makes ``./.venv``) comes
    before every command that runs in it."""
    demo = [c for c in commands if c["command"] == "bash dev.sh demo"]
    installs = [c for c in commands if c["command"].startswith("pip ")]
    rest = [c for c in commands if c not in demo and c not in installs]
    return installs + demo + rest


if __name__ == "__main__":
    main()
