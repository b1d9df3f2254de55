"""The documentation: a README read in five minutes whose links reach the site's pages, and a site that builds
strictly, with a command-line reference that names everything the parser has."""

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import cli, stubs, todos

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
README_WORDS = 1200  # issue 32: a newcomer reads it in five minutes
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `mkdocs build --strict` writes it: a broken link or anchor, a page missing or left out of
    the nav fails the build (mkdocs.yml's validation makes each a warning, and --strict each warning fatal)."""
    out = tmp_path_factory.mktemp("site")
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", "mkdocs.yml", "--site-dir", out]
    built = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return out


def text_of(page: Path) -> str:
    """A built page's text as a reader sees it: tags dropped, entities read, whitespace made single spaces."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))).split())


def subcommands() -> dict:
    """Every command that runs, by its name after `autograde` ('grade', 'rubric check')."""
    return cli.every_command(cli.build_parser())


def test_it_builds_the_site_strictly_with_a_page_per_journey(site):
    for page in ["student", "grader", "instructor", "after-the-deadline", "nbgrader", "gradescope", "policies"]:
        assert (site / page / "index.html").is_file(), page
    for page in ["security", "maintaining", "benchmarks", "cli", "grading"]:
        assert (site / page / "index.html").is_file(), page
    home = text_of(site / "index.html")
    assert "The week in five commands" in home and "Quick start" in home  # the home page is the README


def test_its_cli_reference_names_every_subcommand_option_and_exit_status_the_parser_has(site):
    page = text_of(site / "cli" / "index.html")
    for name, parser in subcommands().items():
        assert f"autograde {name}" in page and " ".join(parser.description.split()) in page, name
        for action in parser._actions:
            for word in [*action.option_strings, *([action.metavar] if isinstance(action.metavar, str) else [])]:
                assert word in page, f"{name}: {word}"
        for line in cli.EXITS.get(name, cli.DEFAULT_EXITS):
            assert " ".join(line.partition("  ")[2].split()) in page, f"{name}: {line}"
    assert "--version" in page and " ".join(cli.__doc__.split("\n\n", 1)[1].split()) in page  # the metavars' names


def test_its_student_page_lists_every_todo_with_its_points_from_the_records(site):
    page = text_of(site / "student" / "index.html")
    for todo in stubs.todos():
        points = sum(todos.by_function()[todo.function].points.values())
        assert f"{todo.number} {todo.name} {todo.module}.{todo.function} {points:g}" in page, todo.label


def test_its_benchmarks_page_shows_the_benchmarks_readme(site):
    page = text_of(site / "benchmarks" / "index.html")
    assert text_of_markdown_line((ROOT / "benchmarks" / "README.md").read_text().splitlines()[2]) in page


def text_of_markdown_line(line: str) -> str:
    return " ".join(line.replace("`", "").split())


def test_its_readme_is_read_in_five_minutes():
    words = len(README.read_text(encoding="utf-8").split())
    assert words <= README_WORDS, f"README.md has {words} words, over {README_WORDS}"


def test_its_readme_links_reach_pages_of_the_site():
    links = LINK.findall(README.read_text(encoding="utf-8"))
    assert links
    for link in links:
        path = link.split("#", 1)[0]
        assert path.startswith("docs/") and path.endswith(".md") and (ROOT / path).is_file(), link


def test_its_readme_names_every_exit_status_of_the_command_line():
    section = README.read_text(encoding="utf-8").split("## Exit statuses", 1)[1].split("\n## ", 1)[0]
    statuses = {line.split()[0] for lines in [cli.SUMMARY_EXITS, *cli.EXITS.values()] for line in lines}
    for status in sorted(status for status in statuses if status.isdigit()):
        assert f"**{status}**" in section, status
    assert "](docs/cli.md)" in section


def test_its_quick_start_commands_are_written_once():
    pages = {page.name: page.read_text(encoding="utf-8") for page in (ROOT / "docs").glob("*.md")}
    quick_start = README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\s*(python -m pip install .+)$", quick_start, flags=re.MULTILINE)
    assert len(commands) == 2, commands
    for command in commands:  # the pages link to the README's quick start
        assert not [name for name, text in pages.items() if command in text], command


WRITES = re.compile(r"(?:--out|mkdir|git clone \S+)\s+([A-Za-z][\w.-]*)")  # a top-level folder a command writes
COMMAND = re.compile(r"^\s*(?:sudo \S+/)?(?:autograde|mkdir|git clone) ", flags=re.MULTILINE)


def test_the_folders_its_walkthroughs_write_here_are_ignored_by_git():
    pages = [README, *(ROOT / "docs" / name for name in ("grader.md", "after-the-deadline.md", "similarity.md"))]
    lines = [line for page in pages for line in page.read_text(encoding="utf-8").splitlines() if COMMAND.match(line)]
    written = {folder for line in lines for folder in WRITES.findall(line)} - {"OUT"}
    assert {"grading", "submissions", "results", "report", "gradebook"} <= written
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert [folder for folder in sorted(written) if f"/{folder}/" not in ignored] == [], "students' code and grades"
