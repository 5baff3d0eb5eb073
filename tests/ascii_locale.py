"""Run a snippet of Python in a child process whose locale encoding is ASCII (``LC_ALL=C``,
UTF-8 mode off), to check that files are written as UTF-8 whatever the locale.

Under mutmut (``mutation/score.py``) the child runs the same mutated copy of
``waterdrum_hf`` (its ``sys.path`` and ``MUTANT_UNDER_TEST`` are the parent's), but mutmut
runs a mutant only against the tests that reached its function in its "stats" run, and it
records those hits in the process that made them: a function reached only in the child would
never be tested against its mutants. So in that run the child writes down the functions it
reached and the parent records them as reached by the calling test."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Appended to the child's code in mutmut's stats run: its trampoline hits, one a line.
_WRITE_HITS = """
def _write_mutmut_hits():
    import os
    from mutmut.state import state
    with open(os.environ["WATERDRUM_MUTMUT_HITS"], "w", encoding="utf-8") as hits:
        hits.write("\\n".join(sorted(state()._stats)))
_write_mutmut_hits()
"""


def run_in_ascii_locale(code: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``python -c code *arguments`` under the C locale with the same ``waterdrum_hf`` as here.

    ``code`` must print ``codecs.lookup(locale.getpreferredencoding(False)).name`` last; the
    run is asserted to have succeeded and its locale to have really been ASCII (a machine that
    forces UTF-8 would otherwise make the check vacuous)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANGUAGE")}
    env.update(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    counting = os.environ.get("MUTANT_UNDER_TEST") == "stats"
    with tempfile.TemporaryDirectory() as scratch:
        hits = Path(scratch) / "hits"
        if counting:
            env["WATERDRUM_MUTMUT_HITS"] = str(hits)
            code += _WRITE_HITS
        run = subprocess.run(
            [sys.executable, "-c", code, *arguments],
            env=env,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
        )
        if counting and hits.exists():
            from mutmut.stats import record_trampoline_hit

            for name in hits.read_text(encoding="utf-8").split():
                record_trampoline_hit(name)
    assert run.returncode == 0, run.stderr[-2000:]
    assert codecs.lookup(run.stdout.strip().splitlines()[-1]).name == "ascii"
    return run
