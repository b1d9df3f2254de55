"""The command-line reference, written from `autograder/cli.py`'s argparse parser at build time.

An MkDocs hook (mkdocs.yml `hooks:`): the page docs/cli.md holds the introduction and a marker, and
the hook puts there every subcommand's description, arguments, defaults and exit statuses as the
parser of this checkout declares them, so the reference cannot drift from `autograde --help`.
"""

import argparse
import html
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # this checkout: its autograder is the one described
MARKER = "<!-- the command-line reference is generated here (docs/hooks/cli_reference.py) -->"
PAGE = "cli.md"
SPECIAL = re.compile(r"([`*_\[\]|\\])")  # what Markdown would read as markup inside a table cell


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs' hook: the CLI page's marker replaced by the reference; every other page as it is."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{PAGE} has lost its marker {MARKER!r}")
    return markdown.replace(MARKER, reference())


def reference() -> str:
    """The whole reference in Markdown: the names it uses, the command's exit statuses, a section per subcommand."""
    sys.path.insert(0, str(ROOT))
    try:
        from autograder import cli
    finally:
        sys.path.remove(str(ROOT))
    parser = cli.build_parser()
    naming = cli.__doc__.split("\n\n", 1)[1]  # the module's docstring: what each metavar names
    sections = [cell(naming) + "\n", f"## `autograde`\n\n{cell(parser.description or '')}\n", usage(parser)]
    sections.append(exits(cli.SUMMARY_EXITS))
    sections += [subcommand(name, sub, cli) for name, sub in cli.every_command(parser).items()]
    return "\n".join(sections)


def subcommand(name: str, parser: argparse.ArgumentParser, cli) -> str:
    """One command that runs ('grade', 'rubric check'): its description, usage, a table of its arguments
    (defaults included, as `--help` shows them) and its exit statuses."""
    rows = [argument(parser, action) for action in parser._actions if action.help is not argparse.SUPPRESS]
    table = "| argument | what it is |\n|---|---|\n" + "\n".join(rows)
    statuses = cli.EXITS.get(name, cli.DEFAULT_EXITS)
    return f"## `autograde {name}`\n\n{cell(parser.description or '')}\n\n{usage(parser)}\n{table}\n\n{exits(statuses)}"


def usage(parser: argparse.ArgumentParser) -> str:
    """The usage line as `--help` prints it, in a code block (at a width that never depends on the terminal)."""
    formatter = argparse.HelpFormatter(parser.prog, width=100)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return f"```\n{formatter.format_help().strip()}\n```\n"


def argument(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """A table row: the argument as typed, and its help as `--help` prints it, with its default."""
    formatter = parser._get_formatter()  # the subcommand's own: it adds the default to the help
    help_text = formatter._expand_help(action) if action.help else ""
    return f"| `{formatter._format_action_invocation(action)}` | {cell(help_text)} |"


def exits(statuses: list[str]) -> str:
    """The exit statuses as a table: the status, what it means (the lines `--help`'s epilog prints)."""
    rows = []
    for line in statuses:
        status, _, meaning = line.partition("  ")
        if not status.isdigit():
            status, meaning = "", line
        rows.append(f"| {status} | {cell(' '.join(meaning.split()))} |")
    return "| exit status | when |\n|---|---|\n" + "\n".join(rows) + "\n"


def cell(text: str) -> str:
    """Help text made inert in Markdown: HTML escaped, markup characters escaped, on one line."""
    return SPECIAL.sub(r"\\\1", html.escape(" ".join(text.split()), quote=False))
