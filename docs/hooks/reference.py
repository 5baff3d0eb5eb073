"""MkDocs hook: the reference pages that are generated at build time, never committed.

- ``reference/commands.md``: every ``waterdrum`` command's options, read from its parser
  (``make_parser()`` of each script in :data:`waterdrum_hf.scripts.COMMANDS`; for ``unlearn``,
  also the options each method's config adds).
- ``reference/settings.md``: every settings dataclass as a table of field, type, default and
  help, found from the package (see :func:`settings_classes`), so a new one appears unasked.
- ``reference/api.md``: a mkdocstrings entry for each name of ``waterdrum_hf.__all__``, grouped
  by the module that defines it (:data:`API_SECTIONS`), and one for each public subpackage.
- ``changelog.md``: ``CHANGELOG.md`` as it is.

A hook rather than the mkdocs-gen-files plugin: nothing more to install, and the pages are plain
functions of the package (:data:`PAGES`), which ``tests/docs/test_docs_site.py`` calls without MkDocs
installed (MkDocs is imported only inside the hook's events).
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import importlib
import inspect
import re
import shutil
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOURCE_TREE = ROOT / "build" / "docs-src"
"""The package laid out as installed (trainers/ and metrics/ inside waterdrum_hf), as links:
mkdocs.yml's mkdocstrings ``paths``. The editable install maps those two folders in by an
import hook, which griffe (mkdocstrings' reader) does not follow."""

API_SECTIONS: dict[str, tuple[str, ...]] = {
    "Scoring and the metric": ("config", "scoring", "metrics", "generation"),
    "Statistics and intervals": (
        "statistics",
        "bootstrap",
        "scoring.seed_comparison",
        "scoring.analytic_null",
    ),
    "Verification": ("scoring.verification", "scoring.dataset_verification", "keys"),
    "Watermark schemes": ("schemes",),
    "Callbacks and training arguments": ("callbacks", "bound_callback"),
    "Watermarking data": ("watermarking",),
    "Audits": ("audits",),
    "Baseline metrics": ("baselines",),
    "Reports": ("report",),
    "Results on the Hub": ("hub_results.publish", "hub_results.config"),
}
"""Sections of the API page: each exported name goes to the section naming the module that
defines it, or else the nearest package above it, relative to ``waterdrum_hf``."""


# --- shared cell formatting -------------------------------------------------------------------

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def cell(text: str) -> str:
    """``text`` as one Markdown table cell: Sphinx roles as code, HTML escaped, no pipes or
    line breaks."""
    text = _ROLE.sub(lambda m: f"``{m.group(1).rsplit('.', 1)[-1]}``", text)
    text = " ".join(html.escape(text, quote=False).split())
    return text.replace("|", "&#124;")


def code_cell(text: str) -> str:
    """``text`` as code in one table cell (a pipe in a type stays inside the cell)."""
    return f"<code>{cell(text)}</code>" if text else ""


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# --- commands ---------------------------------------------------------------------------------


def command_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(name, parser)`` of every ``waterdrum`` command, as ``waterdrum NAME`` builds it."""
    from waterdrum_hf.scripts import COMMANDS

    for name in COMMANDS:
        yield name, script(name).make_parser(prog=f"waterdrum {name}")


def script(name: str) -> types.ModuleType:
    """The script module of command ``name``."""
    return importlib.import_module(f"waterdrum_hf.scripts.{name.replace('-', '_')}")


def method_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(method, parser)``: ``waterdrum unlearn METHOD``'s parser, for each method."""
    import waterdrum_hf.trainers as trainers

    for method in trainers.available():
        yield method, script("unlearn").make_parser(prog="waterdrum unlearn", method=method)


def shown_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's options as ``--help`` lists them (not ``--help`` itself)."""
    return [
        action
        for action in parser._actions
        if action.option_strings
        and action.help != argparse.SUPPRESS
        and not isinstance(action, argparse._HelpAction)
    ]


def option_row(action: argparse.Action) -> tuple[str, ...]:
    """An option's row: its spellings, what it takes, its default and its help."""
    if action.choices is not None:
        takes = "{" + ", ".join(str(choice) for choice in action.choices) + "}"
    elif action.nargs == 0:
        takes = "(flag)"
    elif action.metavar is not None:
        takes = str(action.metavar)
    elif action.type is not None:
        takes = getattr(action.type, "__name__", str(action.type)).upper()
        takes = "BOOL" if takes == "STRING_TO_BOOL" else takes  # HfArgumentParser's bools
    else:
        takes = "STR"
    if action.nargs in ("*", "+"):
        takes += " ..."
    elif action.nargs == "?":  # a bare --flag means its const (True for a bool)
        takes = f"[{takes}]"
    default = "" if action.default in (None, argparse.SUPPRESS) else repr(action.default)
    return (
        ", ".join(f"<code>{cell(spelling)}</code>" for spelling in action.option_strings),
        code_cell(takes),
        code_cell(default),
        cell((action.help or "").replace("%%", "%")),
    )


def options_tables(parser: argparse.ArgumentParser, only: set[str] | None = None) -> str:
    """The parser's options, one table per argument group (those of ``only``'s dests)."""
    shown = set(shown_actions(parser))
    parts = []
    for group in parser._action_groups:
        actions = [
            a for a in group._group_actions if a in shown and (only is None or a.dest in only)
        ]
        if actions:
            parts.append(f"**{cell(group.title or 'options')}**\n")
            header = ("Option", "Takes", "Default", "Help")
            parts.append(table(header, [option_row(a) for a in actions]) + "\n")
    return "\n".join(parts)


def commands_page() -> str:
    """``reference/commands.md``."""
    from waterdrum_hf.scripts import COMMANDS

    lines = [
        "# Commands",
        "",
        "Every `waterdrum` command and its options, read from the command's parser when this "
        "site was built (`waterdrum COMMAND --help` prints the same). Every command takes "
        "`--config FILE.yaml` whose keys are the options' names (with underscores). A "
        "`[BOOL]` option alone means true. The "
        "[guide](../guides/command.md) shows them at work; the "
        "[settings](settings.md) page has each argument group as a table.",
        "",
    ]
    parsers = dict(command_parsers())
    for name, summary in COMMANDS.items():
        parser = parsers[name]
        lines += [f"## waterdrum {name}", "", cell(summary[0].upper() + summary[1:]) + ".", ""]
        lines += ["```text", parser.format_usage().strip(), "```", ""]
        lines += [options_tables(parser)]
        if name == "unlearn":
            lines += unlearn_methods(parser)
    return "\n".join(lines)


def unlearn_methods(generic: argparse.ArgumentParser) -> list[str]:
    """The options each method adds to ``waterdrum unlearn`` once its first word names it."""
    known = {a.dest for a in shown_actions(generic)}
    lines = [
        "### Options of each method",
        "",
        "`waterdrum unlearn METHOD` (the method is the first word) adds that method's own "
        "settings:",
        "",
    ]
    for method, parser in method_parsers():
        added = {a.dest for a in shown_actions(parser)} - known
        lines += [f"#### waterdrum unlearn {method}", ""]
        lines += [options_tables(parser, only=added) if added else "No options of its own.", ""]
    return lines


# --- settings ---------------------------------------------------------------------------------


def settings_classes() -> list[type]:
    """Every settings dataclass of the package, found rather than listed:

    - the argument groups of every command's parser (and of ``unlearn`` under each method);
    - every unlearning method's config (``waterdrum_hf.trainers.get``);
    - the dataclasses exported by ``waterdrum_hf`` and its subpackages whose name ends in
      ``Config``, ``Arguments`` or ``Scheme`` or that have a field with ``help`` metadata;
    - every dataclass a field of one of those is typed with (``WaterDrumConfig.null``...),
      and every dataclass that subclasses one of those (each scheme of ``WatermarkScheme``).

    Only the package's own classes: TRL's and transformers' argument groups are theirs.
    """
    import waterdrum_hf
    import waterdrum_hf.trainers as trainers

    roots: list[type] = []
    for _, parser in [*command_parsers(), *method_parsers()]:
        roots += list(getattr(parser, "dataclass_types", ()))
    roots += [trainers.get(method)[1] for method in trainers.available()]
    modules = [waterdrum_hf] + [
        getattr(waterdrum_hf, name)
        for name in waterdrum_hf.__all__
        if isinstance(getattr(waterdrum_hf, name), types.ModuleType)
    ]
    for module in modules:
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if isinstance(value, type) and dataclasses.is_dataclass(value) and is_settings(value):
                roots.append(value)
    found: list[type] = []
    pending = list(roots)
    while pending:
        cls = pending.pop(0)
        if cls in found or not cls.__module__.startswith("waterdrum_hf"):
            continue
        found.append(cls)
        hints = typing.get_type_hints(cls)
        pending += [t for f in own_fields(cls) for t in dataclass_types_in(hints[f.name])]
        pending += [sub for sub in cls.__subclasses__() if dataclasses.is_dataclass(sub)]
    return sorted(found, key=lambda cls: (cls.__module__, cls.__name__))


def is_settings(cls: type) -> bool:
    """Whether an exported dataclass holds settings rather than results."""
    named = cls.__name__.endswith(("Config", "Arguments", "Scheme"))
    return named or any("help" in f.metadata for f in dataclasses.fields(cls))


def dataclass_types_in(hint: Any) -> Iterator[type]:
    """The dataclasses a type hint names (inside unions, tuples and the like too)."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        yield hint
    for arg in typing.get_args(hint):
        yield from dataclass_types_in(arg)


def own_fields(cls: type) -> list[dataclasses.Field[Any]]:
    """The init fields of ``cls`` that the package defines (not transformers' or TRL's)."""
    ours = {
        name
        for klass in cls.__mro__
        if klass.__module__.startswith("waterdrum_hf")
        for name in inspect.get_annotations(klass)
    }
    return [f for f in dataclasses.fields(cls) if f.init and f.name in ours]


def field_help(cls: type, spec: dataclasses.Field[Any]) -> str:
    """A field's help: its ``help`` metadata, else its entry in the ``Args:`` section of the
    docstring of ``cls`` or of a class above it."""
    if spec.metadata.get("help"):
        return str(spec.metadata["help"])
    for klass in cls.__mro__:
        entry = docstring_args(inspect.getdoc(klass) or "").get(spec.name)
        if entry:
            return entry
    return ""


def docstring_args(doc: str) -> dict[str, str]:
    """The entries of a Google-style docstring's ``Args:`` (or ``Attributes:``) section, by
    name (``a, b: text`` documents both)."""
    entries: dict[str, str] = {}
    names: list[str] = []
    indent = None
    inside = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Attributes:", "Parameters:"):
            inside, indent, names = True, None, []
            continue
        if not inside:
            continue
        depth = len(line) - len(line.lstrip())
        if stripped and depth == 0:
            inside = False
            continue
        if indent is None and stripped:
            indent = depth
        match = re.match(r"([\w, ]+?)(?: \([^)]*\))?: (.*)", stripped)
        if depth == indent and match:
            names = [n.strip() for n in match.group(1).split(",")]
            for name in names:
                entries[name] = match.group(2)
        elif stripped and names:
            for name in names:
                entries[name] += " " + stripped
    return entries


def default_text(spec: dataclasses.Field[Any]) -> str:
    """A field's default as Python writes it (empty when the field is required)."""
    if spec.default is not dataclasses.MISSING:
        return repr(spec.default)
    if spec.default_factory is not dataclasses.MISSING:
        return repr(spec.default_factory())
    return ""


def type_text(spec: dataclasses.Field[Any]) -> str:
    """A field's type as its class writes it."""
    kind = spec.type
    return kind if isinstance(kind, str) else inspect.formatannotation(kind)


def settings_table(cls: type) -> str:
    """One dataclass's fields as a table (required fields say so in the Default column)."""
    rows = [
        (
            f"<code>{cell(spec.name)}</code>",
            code_cell(type_text(spec)),
            code_cell(default_text(spec)) or "*required*",
            cell(field_help(cls, spec)),
        )
        for spec in own_fields(cls)
    ]
    return table(("Field", "Type", "Default", "Help"), rows)


def settings_page() -> str:
    """``reference/settings.md``."""
    lines = [
        "# Settings",
        "",
        "Every settings dataclass of the package, generated from the classes when this site "
        "was built: its fields, their types, defaults and help. Argument groups of the "
        "`waterdrum` commands are here too (each field is the option `--FIELD`; see "
        "[commands](commands.md)). A config that extends transformers' `TrainingArguments` "
        "lists only the fields this package adds.",
        "",
    ]
    for cls in settings_classes():
        summary = (inspect.getdoc(cls) or "").split("\n\n")[0]
        bases = [
            f"`{base.__module__}.{base.__name__}`"
            for base in cls.__mro__[1:]
            if dataclasses.is_dataclass(base) and not base.__module__.startswith("waterdrum_hf")
        ][:1]
        lines += [f"## {cls.__name__}", "", f"`{cls.__module__}.{cls.__name__}`", ""]
        lines += [cell(summary), ""]
        if bases:
            lines += [f"Also takes every field of {bases[0]}.", ""]
        lines += [settings_table(cls), ""]
    return "\n".join(lines)


# --- API --------------------------------------------------------------------------------------


def api_sections() -> dict[str, list[str]]:
    """The dotted paths of the API page by section: ``waterdrum_hf.__all__``'s names at the
    module that defines them, then the public subpackages; a name whose module no section
    claims is an error (add its module to :data:`API_SECTIONS`)."""
    import waterdrum_hf

    sections: dict[str, list[str]] = {title: [] for title in API_SECTIONS}
    subpackages = []
    for name in waterdrum_hf.__all__:
        value = getattr(waterdrum_hf, name)
        if isinstance(value, types.ModuleType):
            subpackages.append(value.__name__)
            continue
        if name == "__version__":
            continue
        module = value.__module__.removeprefix("waterdrum_hf.")
        claims = [
            (len(prefix), title)
            for title, prefixes in API_SECTIONS.items()
            for prefix in prefixes
            if module == prefix or module.startswith(prefix + ".")
        ]
        if not claims:
            raise ValueError(
                f"waterdrum_hf.{name} is defined in {value.__module__}, which no section of "
                "API_SECTIONS (docs/hooks/reference.py) claims"
            )
        title = max(claims)[1]
        sections[title].append(f"{value.__module__}.{name}")
    sections["Subpackages"] = sorted(subpackages)
    return sections


def api_page() -> str:
    """``reference/api.md``."""
    lines = [
        "# API",
        "",
        "The public API from its docstrings: every name `from waterdrum_hf import ...` gives, "
        "under the module that defines it, then the subpackages (`waterdrum_hf.trainers`, "
        "`waterdrum_hf.data`, ...) with their own public names.",
        "",
    ]
    for title, paths in api_sections().items():
        if paths:
            lines += [f"## {title}", ""]
            lines += [f"::: {path}\n" for path in paths]
    return "\n".join(lines)


def changelog_page() -> str:
    """``changelog.md``: the repository's CHANGELOG.md."""
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


PAGES: dict[str, Callable[[], str]] = {
    "reference/commands.md": commands_page,
    "reference/settings.md": settings_page,
    "reference/api.md": api_page,
    "changelog.md": changelog_page,
}
"""The generated pages, by their path under docs/."""
COMMITTED = ("reference/commands.md", "reference/settings.md", "reference/api.md")
"""Generated pages also committed under docs/, so that the pages linking them read in a
checkout too (``python docs/hooks/reference.py`` rewrites them; a test checks they are
current); the site always shows the page generated at build time."""


# --- MkDocs events ----------------------------------------------------------------------------


def lay_out_source_tree() -> None:
    """Build :data:`SOURCE_TREE` afresh: links to the package's files, trainers/ and metrics/
    inside it."""
    shutil.rmtree(SOURCE_TREE, ignore_errors=True)
    package = SOURCE_TREE / "waterdrum_hf"
    package.mkdir(parents=True)
    for entry in (ROOT / "waterdrum_hf").iterdir():
        (package / entry.name).symlink_to(entry)
    for name in ("trainers", "metrics"):
        (package / name).symlink_to(ROOT / name)


def on_startup(command: str, dirty: bool) -> None:
    """Lay out the source tree mkdocstrings reads: before the plugins' configuration, which
    drops a search path that does not exist yet."""
    lay_out_source_tree()


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages, each in place of its committed copy (:data:`COMMITTED`); a
    file of the same name under docs/ for any other is an error (it would hide the generated
    page, or be hidden by it)."""
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    for path, render in PAGES.items():
        committed = files.get_file_from_path(path)
        if committed is not None and path not in COMMITTED:
            raise PluginError(f"docs/{path} is generated by docs/hooks/reference.py; delete it")
        if committed is not None:
            files.remove(committed)
        files.append(File.generated(config, path, content=render()))
    return files


def write_committed_pages() -> list[Path]:
    """Write :data:`COMMITTED` under docs/ as they are generated now."""
    written = []
    for path in COMMITTED:
        target = ROOT / "docs" / path
        target.write_text(PAGES[path](), encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    for page in write_committed_pages():
        sys.stdout.write(f"wrote {page.relative_to(ROOT)}\n")
