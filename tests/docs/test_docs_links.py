"""Every relative link of the README, the metric card and the docs pages resolves from where
it is written (the pages moved out of the README, so their links were rewritten), and the site
hook serves the repository files the pages link outside docs/."""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "metrics/waterdrum/README.md", *sorted(DOCS.rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]*))?\)")
FENCE = re.compile(r"^ *```.*?^ *```", flags=re.S | re.M)
BUILT = {
    DOCS / page
    for page in re.findall(
        r'^    "([\w/-]+\.md)": \w+,$', (DOCS / "hooks/reference.py").read_text(), re.M
    )
}
"""Pages the site's reference hook generates at build time: only docs pages link them (they
are not in the repository, so a link from the README or the card would not resolve there)."""


def slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) and GitHub give a heading."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.M)}


def links(page: Path) -> list[tuple[str, str]]:
    """The relative (target, anchor) pairs of ``page``, code blocks left out."""
    text = FENCE.sub("", page.read_text())
    return [
        (target, anchor or "")
        for target, anchor in LINK.findall(text)
        if "://" not in target and not target.startswith(("mailto:", "/"))
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target, anchor in links(page):
        resolved = (page.parent / target).resolve() if target else page
        if resolved in BUILT and page.is_relative_to(DOCS):
            continue
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}#{anchor}")
    assert not broken, broken


def test_the_reference_pages_are_the_hooks():
    assert {p.relative_to(DOCS).as_posix() for p in BUILT} >= {"reference/api.md", "changelog.md"}


def test_a_broken_link_or_anchor_is_noticed(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A `b` c\n\n[x](page.md#a-b-c) [y](nowhere.md) [z](#nothing)\n")
    assert links(page) == [("page.md", "a-b-c"), ("nowhere.md", ""), ("", "nothing")]
    assert anchors(page) == {"a-b-c"}


@pytest.fixture(scope="module")
def hook():
    pytest.importorskip("mkdocs")
    spec = importlib.util.spec_from_file_location(
        "repository_files", DOCS / "hooks" / "repository_files.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_links_outside_docs_point_at_the_sites_copies(hook):
    plot = "benchmarks/results/demo/benchmark.png"
    assert hook.rewrite(f"![p](../{plot})", "concepts.md", DOCS) == f"![p](repository/{plot})"
    assert (
        hook.rewrite(f"[r](../../{plot}#x)", "guides/audits.md", DOCS)
        == f"[r](../repository/{plot}#x)"
    )
    kept = "[a](guides/metric.md) [b](../no/such/file.md) [c](https://x.org/a.md) [d](#top)"
    assert hook.rewrite(kept, "concepts.md", DOCS) == kept  # docs pages, missing files, URLs
    assert hook.outside_links(
        f"[s](../../SECURITY.md) ![p](../../{plot})", "guides/k.md", DOCS
    ) == {
        "../../SECURITY.md": "SECURITY.md",
        f"../../{plot}": plot,
    }


def test_the_sites_copies_are_never_rendered_as_pages(hook):
    copy = hook.RepositoryFile(
        "repository/SECURITY.md", src_dir=str(DOCS), dest_dir="/tmp/never-built",
        use_directory_urls=True,
    )  # fmt: skip
    assert not copy.is_documentation_page()
    assert copy.dest_uri == "repository/SECURITY.md"


def test_a_linked_repository_markdown_file_reads_as_a_page(hook):
    """A page's link to a repository .md points at its rendered HTML; the HTML renders its
    tables; the files it links to itself (its plots) are copied beside it."""
    report = "benchmarks/results/demo/report.md"
    assert hook.rewrite(f"[r](../{report})", "concepts.md", DOCS) == (
        "[r](repository/benchmarks/results/demo/report.html)"
    )
    page = hook.rendered_page(report, ROOT)
    assert page.startswith("<!doctype html>") and "<table>" in page and "|---" not in page
    assert "benchmarks/results/demo/benchmark.png" in hook.own_links(report, ROOT)
    assert hook.shown_as("a/b.json") == "a/b.json"
