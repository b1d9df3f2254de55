"""How reports write numbers and student text: one way for each, whatever the report.

Numbers: `number` for text (tables, Markdown, CSV, HTML), `json_number` for results.json. What a
call site needs is said at the call: `places` where a score is shown as results.json holds it,
`missing` for what stands in a cell without a value.

Student text: everything a student controls (file names, what their code raises and prints, git's
messages about their commits) is shown inert. `escaped` makes one printable line of it (bytes that
are not UTF-8 as `\\xff`, control and invisible format characters as `\\n`, `\\x1b`, `\\u202e`);
`clean` keeps the lines of a longer text but drops escapes and defuses workflow commands; in
Markdown, `code` and `fenced` show it as code, where GitHub makes no mention, link, image, HTML or
heading of it; `workflow_command` writes a GitHub Actions command whose student data cannot end it
or start another. Standard library only (the feedback job runs with nothing else).
"""

import re
import unicodedata

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SURROGATE = re.compile(r"[\ud800-\udfff]")
NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
UNSEEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # control, format (bidi overrides, zero-width), surrogates, separators


def number(value: float | None, *, places: int | None = None, missing: str = "") -> str:
    """`value` as reports write it: 5, 2.5, 0.75 (no trailing zeros, at most six significant digits).

    `places` rounds it first (a score as results.json holds it); `missing` is written for None
    (the gradebook's empty CSV cell, the class report's dash).
    """
    if value is None:
        return missing
    return f"{value if places is None else round(value, places):g}"


def json_number(value: float, places: int = 2) -> int | float:
    """`value` as results.json holds it: a whole number as an integer, any other rounded to `places`."""
    return int(value) if float(value).is_integer() else round(value, places)


def _unseen(character: str) -> str:
    """How `escaped` writes a character a reader would not see as itself."""
    point = ord(character)
    if character in NAMED:
        return NAMED[character]
    if 0xDC80 <= point <= 0xDCFF:  # a byte the file system could not decode (surrogateescape)
        return f"\\x{point - 0xDC00:02x}"
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def printable(text: str) -> str:
    """`text` on one line, every character a reader would not see written as an escape (backslashes kept)."""
    return "".join(_unseen(c) if unicodedata.category(c) in UNSEEN else c for c in text)


def escaped(text: str) -> str:
    """A name or a message from the student, on one printable line, unambiguous: `notes-\\xff.txt`.

    Backslashes are doubled, so that `\\xff` always stands for the byte and never for the four
    characters."""
    return printable(text.replace("\\", "\\\\"))


def valid(text: str) -> str:
    """`text` that any UTF-8 writer accepts: lone surrogates (undecodable bytes) written as escapes."""
    return SURROGATE.sub(lambda match: _unseen(match[0]), text)


def clean(text: str) -> str:
    """Plain printable lines: escapes dropped, workflow commands defused (`::x` -> `: :x`)."""
    text = CONTROL.sub("", ANSI.sub("", valid(text).replace("\r\n", "\n")))
    return "\n".join(": :" + line.lstrip()[2:] if line.lstrip().startswith("::") else line for line in text.split("\n"))


def _longest_run(text: str, character: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(character)}+", text)), default=0)


def code(text: str) -> str:
    """`text` as an inline Markdown code span: shown as written, never a mention, link, image, tag or heading.

    The span's backticks outnumber any run in the text; control characters become escapes, so
    that nothing ends the span, the paragraph or the table row it stands in."""
    inner = printable(text) or " "
    fence = "`" * (_longest_run(inner, "`") + 1)
    pad = " " if inner[0] in "` " or inner[-1] in "` " else ""
    return f"{fence}{pad}{inner}{pad}{fence}"


def fenced(text: str, info: str = "text") -> str:
    """`text` (cleaned lines) as a fenced Markdown code block that nothing in it can close."""
    body = clean(text)
    fence = "`" * max(3, _longest_run(body, "`") + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def cell(text: str) -> str:
    """`text` as one cell of a Markdown table: pipes escaped (also inside a code span), on one line."""
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


FORMULA = ("=", "+", "-", "@", "\t", "\r")  # how a cell a spreadsheet would read as a formula begins


def spreadsheet(text: str) -> str:
    """A CSV cell a spreadsheet will not read as a formula: one that begins like one gets a leading quote."""
    return "'" + text if text.startswith(FORMULA) else text


def _command_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_command(command: str, message: str, **properties: str) -> str:
    """A GitHub Actions command line (`::error title=...::message`), its values escaped as the runner reads them."""
    written = ",".join(
        f"{key}={_command_data(value).replace(':', '%3A').replace(',', '%2C')}" for key, value in properties.items()
    )
    return f"::{command}{' ' + written if written else ''}::{_command_data(message)}"
