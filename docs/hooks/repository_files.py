"""MkDocs hook: links from a page to a file of the repository outside ``docs/``.

A page links a results file, a plot or SECURITY.md by its path in the repository
(``../benchmarks/results/demo/audits.json`` from ``docs/guides/``), which resolves on GitHub as
written. On the site the file is copied as it is under ``repository/`` (a plot shows, a results
file opens, offline) and the link is rewritten to that copy. A link to a file the repository
does not have is left as written, so the strict build reports it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File

PREFIX = "repository"
"""Where the site keeps its copies of the repository's files."""

LINK = re.compile(r"(\]\()([^)\s#]+)((?:#[^)\s]*)?\))")
"""A Markdown link or image target: ``](target)`` or ``](target#anchor)``."""


class RepositoryFile(File):
    """A repository file copied into the site as it is: never rendered, even a ``.md``."""

    def is_documentation_page(self) -> bool:
        return False


def repository_path(target: str, page: str, docs: Path) -> str | None:
    """The path in the repository of link ``target`` on page ``page`` (relative to ``docs``)
    when it leaves ``docs`` for a file the repository has; else None."""
    if "://" in target or target.startswith(("/", "mailto:")):
        return None
    root = docs.parent.resolve()
    resolved = (docs / posixpath.dirname(page) / target).resolve()
    if resolved.is_relative_to(docs.resolve()) or not resolved.is_relative_to(root):
        return None
    return resolved.relative_to(root).as_posix() if resolved.is_file() else None


def outside_links(markdown: str, page: str, docs: Path) -> dict[str, str]:
    """Each link target of ``markdown`` that leaves ``docs`` for a repository file, with that
    file's path in the repository."""
    found = {}
    for match in LINK.finditer(markdown):
        path = repository_path(match.group(2), page, docs)
        if path is not None:
            found[match.group(2)] = path
    return found


def rewrite(markdown: str, page: str, docs: Path) -> str:
    """``markdown`` with each link to a repository file outside ``docs`` pointed at its copy."""
    targets = outside_links(markdown, page, docs)

    def point(match: re.Match[str]) -> str:
        path = targets.get(match.group(2))
        if path is None:
            return match.group(0)
        copy = posixpath.relpath(f"{PREFIX}/{path}", posixpath.dirname(page) or ".")
        return match.group(1) + copy + match.group(3)

    return LINK.sub(point, markdown)


def on_files(files: Any, config: Any) -> Any:
    """Add a copy of every repository file a page links to."""
    docs = Path(config.docs_dir)
    wanted: set[str] = set()
    for page in files.documentation_pages():
        if page.abs_src_path:
            text = Path(page.abs_src_path).read_text(encoding="utf-8")
            wanted |= set(outside_links(text, page.src_uri, docs).values())
    for path in sorted(wanted):
        files.append(
            RepositoryFile.generated(
                config, f"{PREFIX}/{path}", abs_src_path=str(docs.parent / path)
            )
        )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Point the page's links to repository files at their copies."""
    return rewrite(markdown, page.file.src_uri, Path(config.docs_dir))
