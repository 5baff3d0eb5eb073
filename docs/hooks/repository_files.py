"""MkDocs hook: links from a page to a file of the repository outside ``docs/``.

A page links a results file, a plot or SECURITY.md by its path in the repository
(``../benchmarks/results/demo/audits.json`` from ``docs/guides/``), which resolves on GitHub as
written. On the site the file is copied as it is under ``repository/`` (a plot shows, a results
file opens, offline) and the link is rewritten to that copy; a Markdown file is rendered to
HTML beside its copy (``report.md`` -> ``report.html``, the link pointing there) so that it
reads as a page, not as raw Markdown, and the files it links to itself (its plots) are copied
too. A link to a file the repository does not have is left as written, so the strict build
reports it.
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
        copy = posixpath.relpath(f"{PREFIX}/{shown_as(path)}", posixpath.dirname(page) or ".")
        return match.group(1) + copy + match.group(3)

    return LINK.sub(point, markdown)


def shown_as(path: str) -> str:
    """Where the site shows repository file ``path``: a Markdown file as its rendered HTML."""
    return path[: -len(".md")] + ".html" if path.endswith(".md") else path


def own_links(path: str, root: Path) -> set[str]:
    """The repository files a repository Markdown file links to itself (relative links that
    resolve to a file), as paths in the repository."""
    text = (root / path).read_text(encoding="utf-8")
    found = set()
    for match in LINK.finditer(text):
        target = match.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            continue
        resolved = (root / posixpath.dirname(path) / target).resolve()
        if resolved.is_relative_to(root.resolve()) and resolved.is_file():
            found.add(resolved.relative_to(root.resolve()).as_posix())
    return found


def rendered_page(path: str, root: Path) -> str:
    """Repository Markdown file ``path`` as a standalone HTML page (tables, fenced code and
    heading anchors rendered); its own links stay as written, to the copies beside it."""
    import html

    import markdown

    text = (root / path).read_text(encoding="utf-8")
    body = markdown.markdown(text, extensions=["tables", "fenced_code", "toc"])
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{html.escape(path)}'
        f"</title></head>\n<body>\n<p><code>{html.escape(path)}</code></p>\n{body}\n"
        "</body></html>\n"
    )


def on_files(files: Any, config: Any) -> Any:
    """Add a copy of every repository file a page links to (and of the files a linked Markdown
    file links to), and each linked Markdown file rendered to HTML."""
    docs = Path(config.docs_dir)
    root = docs.parent
    linked: set[str] = set()
    for page in files.documentation_pages():
        if page.abs_src_path:
            text = Path(page.abs_src_path).read_text(encoding="utf-8")
            linked |= set(outside_links(text, page.src_uri, docs).values())
    rendered = {path for path in linked if path.endswith(".md")}
    copies = set(linked)
    for path in rendered:
        copies |= {p for p in own_links(path, root) if not p.startswith("docs/")}
    for path in sorted(copies):
        files.append(
            RepositoryFile.generated(config, f"{PREFIX}/{path}", abs_src_path=str(root / path))
        )
    for path in sorted(rendered):
        files.append(
            RepositoryFile.generated(
                config, f"{PREFIX}/{shown_as(path)}", content=rendered_page(path, root)
            )
        )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Point the page's links to repository files at their copies."""
    return rewrite(markdown, page.file.src_uri, Path(config.docs_dir))
