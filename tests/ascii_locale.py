"""Run a snippet of Python in a child process whose locale encoding is ASCII (``LC_ALL=C``,
UTF-8 mode off), to check that files are written as UTF-8 whatever the locale."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys


def run_in_ascii_locale(code: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``python -c code *arguments`` under the C locale with the same ``waterdrum_hf`` as here.

    ``code`` must print ``codecs.lookup(locale.getpreferredencoding(False)).name`` last; the
    run is asserted to have succeeded and its locale to have really been ASCII (a machine that
    forces UTF-8 would otherwise make the check vacuous)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANGUAGE")}
    env.update(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    run = subprocess.run(
        [sys.executable, "-c", code, *arguments],
        env=env,
        capture_output=True,
        encoding="utf-8",
        errors="replace",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert codecs.lookup(run.stdout.strip().splitlines()[-1]).name == "ascii"
    return run
