"""Resumable pipeline stages: each artefact lives in a folder named by what produced it.

The demo and the paper reproduction train dozens of small models. Every stage (a watermarked
dataset, a trained model, a set of generations) is written to ``<root>/<stage>-<digest>``,
where the digest covers the stage's settings, the digests of the stages it was built from, the
library version and the CPU kernels (a model trained under AVX-512 kernels differs from one
trained under AVX2), so a cache written with other settings, by another version or under other
kernels is never reused. A stage is built in a temporary folder and renamed into place when complete: a run
killed mid-way leaves no half-written artefact, and the next run resumes after the last
completed stage. Digests never include watermark keys in the clear: settings hold seeds or the
keys' slow one-way hashes (:func:`waterdrum_hf.utils.fingerprint.key_digest`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from waterdrum_hf._version import library_version
from waterdrum_hf.utils.files import building_folder
from waterdrum_hf.utils.fingerprint import json_digest
from waterdrum_hf.utils.torch_plumbing import cpu_kernels

T = TypeVar("T")

BUILD_RECORD = ".build.json"
"""Kept in each stage's folder: how long building it took."""

LAYOUT = 4
"""Version of what stages store; bumped whenever a stage's files change, so that an older
cache is rebuilt rather than misread."""


@dataclass(frozen=True)
class Stage:
    """One cached artefact: its folder and the digest later stages depend on."""

    path: Path
    digest: str

    @property
    def done(self) -> bool:
        return self.path.is_dir()


class StageCache:
    """Folders of completed stages under ``root``.

    Args:
        root: where the stages live (created on first use).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._built: set[Path] = set()
        self._reused: dict[Path, float] = {}

    @property
    def built(self) -> int:
        """How many stages this object built."""
        return len(self._built)

    @property
    def reused(self) -> int:
        """How many stages it found already built by an earlier run."""
        return len(self._reused)

    @property
    def reused_seconds(self) -> float:
        """What building the reused stages took (stages built before build times were kept
        count as 0): a resumed run's own time plus this is the cost of a run from scratch."""
        return sum(self._reused.values())

    def stage(self, name: str, settings: Mapping[str, Any], *parents: Stage) -> Stage:
        """The stage ``name`` built with ``settings`` from ``parents`` (built or not)."""
        payload = {
            "stage": name,
            "version": library_version(),
            "layout": LAYOUT,
            "kernels": cpu_kernels(),
            "settings": settings,
            "parents": [parent.digest for parent in parents],
        }
        digest = json_digest(payload)[:16]
        return Stage(self.root / f"{name}-{digest}", digest)

    def build(self, stage: Stage, build: Callable[[Path], object]) -> bool:
        """Run ``build(folder)`` unless the stage is done; returns whether it ran.

        ``build`` writes into an empty temporary folder that becomes ``stage.path`` only when
        it returns; on an exception nothing is left behind.
        """
        if stage.done:
            if stage.path not in self._built:
                self._reused[stage.path] = _build_seconds(stage.path)
            return False
        with building_folder(stage.path) as tmp:
            start = time.perf_counter()
            build(tmp)
            seconds = round(time.perf_counter() - start, 1)
            (tmp / BUILD_RECORD).write_text(json.dumps({"seconds": seconds}))
        self._built.add(stage.path)
        return True

    def load_or_build(
        self, stage: Stage, build: Callable[[Path], object], load: Callable[[Path], T]
    ) -> T:
        """``load(stage.path)``, building the stage first if it is not done."""
        self.build(stage, build)
        return load(stage.path)

    def cached_json(self, stage: Stage, compute: Callable[[], Any]) -> Any:
        """``compute()`` (anything JSON can hold), computed once per stage (``result.json``)."""
        return self.load_or_build(
            stage,
            lambda folder: (folder / "result.json").write_text(json.dumps(compute())),
            lambda folder: json.loads((folder / "result.json").read_text()),
        )


def _build_seconds(folder: Path) -> float:
    """How long building the stage in ``folder`` took (0 when not recorded)."""
    try:
        return float(json.loads((folder / BUILD_RECORD).read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
