"""A fork's hostile tree (names that break writers or go live in reports, folders nested past any
recursion), and the checks that what the grader wrote of it is inert.

Markdown is rendered by cmark-gfm, GitHub's own parser (raw HTML kept, as GitHub keeps `<img>` and
`<details>`): inert means that every name appears inside a `<code>` element, that no `<a>` or
`<img>` and no heading the grader did not write come out of it, and that no text outside code
holds a mention (`@user`), an issue reference (`#1`) or an address GitHub would link.
"""

import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options

from autograder.text import escaped

# what each name tries, and the name (bytes where it is not UTF-8)
NAMES: dict[str, str | bytes] = {
    "not UTF-8": b"notes-\xff.txt",
    "a heading": "## Week 07 \u00b7 Recurrent Networks: 100 \u2215 100.md",
    "HTML": "<img src=x onerror=alert(1)>.md",
    "a link": "[full marks](https:evil.example).md",
    "an image": "![x](https:evil.example).md",
    "terminal escapes": "\x1b[2J\x1b[31mred.txt",
    "workflow commands": "notes\n::error title=forged::pwned\n::add-mask::secret\n::stop-commands::tok.txt",
    "a mention": "@user look.txt",
    "a team mention": "@org/team.txt",  # a folder @org
    "an issue reference": "fixes #1.txt",
    "backticks": "a`b``c.txt",
    "a pipe": "a|b.txt",
    "a bidi override": "\u202eevil.txt",
    "an address": "www.evil.example.txt",
}
DEPTH = 1100  # folders `d/d/...` nested in one another: past Python's recursion limit, within PATH_MAX
LIVE_TEXT = re.compile(r"(?<![\w`])@[A-Za-z0-9]|#\d|www\.|://")


def shown(name: str | bytes) -> str:
    """The name as the reports show it (escaped)."""
    return escaped(os.fsdecode(name))


def plant(folder: Path) -> list[str]:
    """Write the hostile names and a tree DEPTH folders deep into `folder`; return the names as shown."""
    for name in NAMES.values():
        path = os.path.join(os.fsencode(folder), os.fsencode(name))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(b"not a module\n")
    descriptor = os.open(folder, os.O_RDONLY)
    for _ in range(DEPTH):  # os.makedirs recurses: it cannot make this tree
        os.mkdir("d", dir_fd=descriptor)
        inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = inner
    with open(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor), "w") as leaf:
        leaf.write("the bottom\n")
    os.close(descriptor)
    return [shown(name) for name in NAMES.values()]


class _Parts(HTMLParser):
    """What rendered HTML holds: its tags, the text of its code elements, and the text outside them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.code: list[str] = []
        self.text: list[str] = []
        self.headings: list[str] = []
        self._in_code = 0
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        if tag in ("code", "pre"):  # a block is <pre><code>: one code element
            self._in_code += 1
        if tag == "code":
            self.code.append("")
        if re.fullmatch(r"h\d", tag):
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self._in_code -= 1
        if re.fullmatch(r"h\d", tag) and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._in_code and self.code:
            self.code[-1] += data
        else:
            self.text.append(data)
        if self._heading is not None:
            self._heading.append(data)


def rendered(markdown: str) -> _Parts:
    parts = _Parts()
    parts.feed(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))
    return parts


def live(markdown: str, names: list[str], headings: list[str]) -> list[str]:
    """What of `markdown`, rendered as GitHub renders it, is not inert: [] when nothing."""
    parts = rendered(markdown)
    problems = [f"<{tag}> in the rendered page" for tag in sorted(set(parts.tags) & {"a", "img", "script", "iframe"})]
    problems += [f"a heading the grader did not write: {text!r}" for text in parts.headings if text not in headings]
    outside = "".join(parts.text)
    problems += [f"live text outside code: {match[0]!r}" for match in LIVE_TEXT.finditer(outside)]
    problems += [f"{name!r} is not shown as code" for name in names if not any(name in code for code in parts.code)]
    return problems


def workflow_commands(log: str) -> list[str]:
    """The lines of a log a GitHub runner would read as commands."""
    return [line for line in log.splitlines() if line.lstrip().startswith("::")]


def remove(folder: Path) -> None:
    """Remove a tree however deep (shutil.rmtree, and so pytest's clean-up, recurse: 1,100 folders stop them)."""
    subprocess.run(["rm", "-rf", "--", str(folder)], check=True, timeout=300)
