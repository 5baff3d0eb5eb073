"""The documentation site's generated reference pages (docs/hooks/reference.py) and its nav.

The strict build itself (`mkdocs build --strict`: broken links, docstrings that fail to render)
runs in CI through `bash dev.sh docs`, not here; these tests check what the pages say against
the parsers and dataclasses they are generated from, without MkDocs installed.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import re
import typing
from pathlib import Path

import pytest
import yaml

import waterdrum_hf
import waterdrum_hf.trainers as trainers
from waterdrum_hf.scripts import COMMANDS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hook():
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "docs/hooks/reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def commands_page(hook):
    return hook.commands_page()


@pytest.fixture(scope="module")
def settings_page(hook):
    return hook.settings_page()


def sections(page: str, marker: str) -> dict[str, str]:
    """The page's parts by heading: ``marker NAME`` up to the next heading of that level."""
    parts = re.split(rf"^{re.escape(marker)} (.+)$", page, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def documented_options(parser: argparse.ArgumentParser) -> set[str]:
    """Every spelling of every option the parser takes, from argparse's own table of them."""
    return {
        spelling
        for spelling, action in parser._option_string_actions.items()
        if action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction)
    }


def options_named(text: str) -> set[str]:
    """The option spellings in the first column of the text's tables."""
    return {
        spelling
        for line in text.splitlines()
        if line.startswith("| <code>-")
        for spelling in re.findall(r"<code>([^<]+)</code>", line.split(" | ")[0])
    }


def test_commands_page_names_every_option_of_every_parser(commands_page):
    """Each command's section names every spelling of every option its parser takes (and only
    its own). Catches: an argument group left out (the method config's flags, which unlearn's
    parser moves into groups of their own), an alias dropped, a command missing."""
    by_command = sections(commands_page, "## waterdrum")
    assert list(by_command) == list(COMMANDS)
    for name in COMMANDS:
        module = importlib.import_module(f"waterdrum_hf.scripts.{name.replace('-', '_')}")
        parser = module.make_parser(prog=f"waterdrum {name}")
        text = by_command[name].split("### Options of each method")[0]
        shown = options_named(text)
        assert shown == documented_options(parser), name
        assert "--config" in shown


def test_commands_page_lists_what_each_unlearning_method_adds(commands_page):
    """``waterdrum unlearn M`` takes the options of M's config; the page names, under
    each method, those the generic parser lacks. Catches: a method's own settings (NPO's beta,
    SCRUB's phases) missing from the page."""
    unlearn = importlib.import_module("waterdrum_hf.scripts.unlearn")
    generic = documented_options(unlearn.make_parser())
    by_method = sections(
        commands_page.split("\n## waterdrum unlearn\n")[1], "#### waterdrum unlearn"
    )
    assert list(by_method) == trainers.available()
    for method in trainers.available():
        added = documented_options(unlearn.make_parser(method=method)) - generic
        text = by_method[method].split("\n## ")[0]
        assert options_named(text) == added, method
    assert by_method["npo"].count("--beta") == 1


def table_rows(text: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows."""
    lines = [line for line in text.splitlines() if line.startswith("| ")][2:]
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]


def test_settings_page_has_a_row_per_field_with_its_help(hook, settings_page):
    """Each settings class's table has one row per init field the package defines, in order,
    with its help: the field's ``help`` metadata, else its ``Args:`` entry. Catches: a field
    dropped or given another field's help, a method config listing transformers' hundreds of
    TrainingArguments fields as its own."""
    by_class = sections(settings_page, "##")
    for cls in hook.settings_classes():
        rows = table_rows(by_class[cls.__name__])
        own = [f for f in dataclasses.fields(cls) if f.init and f.name in own_names(cls)]
        assert [r[0] for r in rows] == [f"<code>{f.name}</code>" for f in own], cls
        for row, spec in zip(rows, own, strict=True):
            if "help" in spec.metadata:
                assert row[3] == hook.cell(spec.metadata["help"]), (cls, spec.name)
            else:
                assert row[3], f"{cls.__name__}.{spec.name} has no help in metadata or Args:"
    npo = [r[0] for r in table_rows(by_class["NPOConfig"])]
    assert "<code>beta</code>" in npo and "<code>learning_rate</code>" not in npo


def own_names(cls: type) -> set[str]:
    """Names annotated by the package's own classes in ``cls``'s MRO."""
    return {
        name
        for klass in cls.__mro__
        if klass.__module__.startswith("waterdrum_hf")
        for name in klass.__dict__.get("__annotations__", {})
    }


def test_settings_page_finds_the_settings_classes(hook):
    """The page finds, without a list to keep: every argument group of the package's own in
    every command's parser, every method's config, the exported settings, every registered
    scheme, and every dataclass a found class's field is typed with. Catches: discovery that
    stops at the parsers (no WaterDrumConfig), misses a method, or misses a registered scheme
    that is not exported (SynthIDScheme, found as a subclass of WatermarkScheme)."""
    from waterdrum_hf.schemes import SCHEMES

    found = set(hook.settings_classes())
    expected = {
        waterdrum_hf.WaterDrumConfig,
        waterdrum_hf.NullConfig,
        waterdrum_hf.IntervalConfig,
        waterdrum_hf.WaterDrumArguments,
        waterdrum_hf.WatermarkingConfig,
        waterdrum_hf.AuditConfig,
        waterdrum_hf.HubResultsConfig,
        waterdrum_hf.KGWScheme,
        waterdrum_hf.WaterfallScheme,
        waterdrum_hf.EXPEditScheme,
    }
    expected |= {trainers.get(method)[1] for method in trainers.available()}
    expected |= set(SCHEMES.values())
    for cls in found:
        hints = typing.get_type_hints(cls)
        expected |= {t for f in dataclasses.fields(cls) for t in dataclasses_named(hints[f.name])}
    for name in COMMANDS:
        module = importlib.import_module(f"waterdrum_hf.scripts.{name.replace('-', '_')}")
        groups = module.make_parser().dataclass_types
        expected |= {g for g in groups if g.__module__.startswith("waterdrum_hf")}
    assert expected <= found
    assert (
        not {waterdrum_hf.WaterDrumResult, waterdrum_hf.Interval} & found
    )  # results, not settings


def dataclasses_named(hint) -> set[type]:
    """The package's dataclasses a type hint names, at any depth."""
    named = {t for t in typing.get_args(hint) for t in dataclasses_named(t)}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        named.add(hint)
    return {t for t in named if t.__module__.startswith("waterdrum_hf")}


def test_docstring_args_reads_google_sections(hook):
    """A field without ``help`` metadata takes its ``Args:`` entry. Catches: a continuation
    line lost, ``a, b: text`` documenting only ``a``, the next section read as arguments."""
    doc = (
        "Summary.\n\nArgs:\n    alpha: first line\n        continued.\n"
        "    beta, gamma (int): shared.\n\nReturns:\n    delta: not an argument.\n"
    )
    assert hook.docstring_args(doc) == {
        "alpha": "first line continued.",
        "beta": "shared.",
        "gamma": "shared.",
    }


def test_api_page_documents_every_public_name_once(hook):
    """Every name of ``waterdrum_hf.__all__`` is one mkdocstrings entry at the module that
    defines it (so its docstring renders), and every public subpackage is one. Catches: a new
    export left off the page, an entry at a path griffe cannot resolve."""
    entries = re.findall(r"^::: (\S+)$", hook.api_page(), flags=re.MULTILINE)
    assert len(entries) == len(set(entries))
    by_name = {entry.rsplit(".", 1)[-1]: entry for entry in entries}
    for name in waterdrum_hf.__all__:
        if name == "__version__":
            continue
        value = getattr(waterdrum_hf, name)
        if isinstance(value, type(waterdrum_hf)):
            assert value.__name__ in entries, name
            continue
        module, _, attribute = by_name[name].rpartition(".")
        assert getattr(importlib.import_module(module), attribute) is value, name


def nav_pages(nav) -> list[str]:
    """The page paths of mkdocs.yml's nav."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return [page for item in nav for page in nav_pages(item)]


def test_every_nav_page_exists_and_only_the_reference_pages_are_committed(hook):
    """Every page of the nav is a file under docs/ or one the hook generates; of the generated
    pages the reference pages alone are also committed (so links to them work in a checkout),
    any other copy would be refused by the build. Catches: a nav entry for a page that was
    renamed or never written; a generated page committed by mistake."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = nav_pages(config["nav"])
    assert len(pages) == len(set(pages))
    for page in pages:
        assert (ROOT / "docs" / page).is_file() or page in hook.PAGES, page
    for page in hook.PAGES:
        assert (ROOT / "docs" / page).exists() == (page in hook.COMMITTED), page
        assert page in pages, page


@pytest.mark.end_to_end  # the floors' transformers words TrainingArguments' help otherwise
@pytest.mark.parametrize(
    "page", ["reference/commands.md", "reference/settings.md", "reference/api.md"]
)
def test_the_committed_reference_pages_are_current(hook, page):
    """What `python docs/hooks/reference.py` writes now: a changed option, field or public
    name makes the committed copy stale."""
    assert page in hook.COMMITTED
    committed = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert committed == hook.PAGES[page](), f"docs/{page} is stale: python docs/hooks/reference.py"
