"""Summarise the public tests' junit report per TODO, for the CI job summary and GitHub Classroom.

    python .github/scripts/summarize.py public-tests.xml

- appends a Markdown table (one row per TODO: passed / failed public tests, and for a failing TODO
  the first line of its failure, the named mistake's when a failure names one) to $GITHUB_STEP_SUMMARY;
- writes the step output `result`: base64 JSON in the format GitHub Classroom's autograding
  reporter reads ({version, status, max_score, tests: [{name, status, score, message, test_code, ...}]}),
  one test per TODO scoring 1 when all its public tests pass; the reporter prints `test_code` for every
  test (and `message` only for errors), so a failing TODO's first line goes into both;
- prints the table. It always exits 0: the test step before it is the one that fails.

The public tests are not the grade: they check shapes and small cases only.
Standard library only; `todos.json` beside this file maps each public test to its TODO.
"""

import base64
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

MAPPING = Path(__file__).resolve().parent / "todos.json"
MESSAGE_CHARACTERS = 500
NAMED = re.compile(r"^\[[A-Z]\d\] ")  # a failure that names a known mistake: "[G1] Your final states ..."


@dataclass
class Row:
    number: int
    name: str
    function: str
    passed: int = 0
    failed: list[str] = field(default_factory=list)  # "test name: first line of the failure"
    seconds: float = 0.0

    @property
    def status(self) -> str:
        return "pass" if self.passed and not self.failed else "fail"

    @property
    def first_line(self) -> str:
        """The first named mistake when a failure names one ("[G1] ..."), else "test: its failure's first line"."""
        messages = (failure.split(": ", 1)[-1] for failure in self.failed)
        return next((message for message in messages if NAMED.match(message)), self.failed[0] if self.failed else "")


def _one_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = re.sub(r"[\x00-\x1f\x7f]", "", line).removeprefix("AssertionError: ").removeprefix("Failed: ")
    return line if len(line) <= MESSAGE_CHARACTERS else line[: MESSAGE_CHARACTERS - 3] + "..."


def _outcome(case: ET.Element) -> tuple[str, str]:
    for tag in ("failure", "error"):
        child = case.find(tag)
        if child is not None:
            return "failed", _one_line(child.get("message") or child.text or tag)
    if case.find("skipped") is not None:
        return "skipped", ""
    return "passed", ""


def _module(classname: str) -> str:
    """'exercises.tests.test_padding' -> 'test_padding'."""
    parts = [part for part in classname.split(".") if part.startswith("test_")]
    return parts[-1] if parts else classname


def tally(junit: Path, mapping: dict) -> tuple[list[Row], list[str]]:
    """Rows per TODO and the failures that belong to no TODO (collection errors, extra tests)."""
    rows = {todo["number"]: Row(todo["number"], todo["name"], todo["function"]) for todo in mapping["todos"]}
    tests: dict[str, int] = mapping["tests"]
    modules: dict[str, set[int]] = {}
    for key, number in tests.items():
        modules.setdefault(key.split("::")[0], set()).add(number)
    other: list[str] = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        classname = case.get("classname", "")
        outcome, message = _outcome(case)
        if not classname and outcome == "failed":  # a module that could not be collected
            hit = modules.get(name.split(".")[-1], set())
            for number in sorted(hit):
                rows[number].failed.append(f"{name}: {message}")
            if not hit:
                other.append(f"{name}: {message}")
            continue
        number = tests.get(f"{_module(classname)}::{name}")
        if number is None:
            if outcome == "failed":
                other.append(f"{_module(classname)}::{name}: {message}")
            continue
        row = rows[number]
        row.seconds += float(case.get("time") or 0)
        if outcome == "passed":
            row.passed += 1
        elif outcome == "failed":
            row.failed.append(f"{name}: {message}")
    return sorted(rows.values(), key=lambda row: row.number), other


def markdown(rows: list[Row], other: list[str], error: str = "") -> str:
    done = sum(row.status == "pass" for row in rows)
    lines = [
        f"## Public tests: {done} of {len(rows)} TODOs passing",
        "",
        "| TODO | function | passed | failed | |",
        "|---|---|---:|---:|---|",
    ]
    for row in rows:
        mark = "✅" if row.status == "pass" else "❌"
        first = row.first_line.replace("|", "\\|") if row.failed else ("no public test ran" if not row.passed else "")
        todo = f"{row.number} · {row.name}"
        lines.append(f"| {todo} | `{row.function}` | {row.passed} | {len(row.failed)} | {mark} {first} |")
    if error:
        lines += ["", f"**{error}**"]
    if other:
        lines += ["", "Other failures:", ""] + [f"- {text}" for text in other[:20]]
    lines += [
        "",
        "These are the public tests only (shapes and small known cases). The grade comes from the course's "
        "own hidden tests, which check more.",
    ]
    return "\n".join(lines) + "\n"


def classroom(rows: list[Row], error: str = "") -> dict:
    """The result in the format of GitHub Classroom's autograding reporter."""
    tests = [
        {
            "name": f"TODO {row.number} · {row.name} ({row.function})",
            "status": row.status,
            "score": 1 if row.status == "pass" else 0,
            "message": row.first_line or ("" if row.passed else "no public test ran"),
            "test_code": f"python -m pytest -k {row.function.split('.')[-1]}"
            + (f"\n{row.first_line}" if row.failed else ""),
            "filename": f"exercises/{row.function.split('.')[0]}.py",
            "line_no": 0,
            "duration": round(row.seconds * 1000),
        }
        for row in rows
    ]
    status = "error" if error else ("pass" if all(row.status == "pass" for row in rows) else "fail")
    return {"version": 1, "status": status, "max_score": len(rows), "tests": tests}


def _append(variable: str, text: str) -> None:
    target = os.environ.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)


def main(argv: list[str]) -> int:
    junit = Path(argv[1] if len(argv) > 1 else "public-tests.xml")
    mapping = json.loads(MAPPING.read_text(encoding="utf-8"))
    error = ""
    try:
        rows, other = tally(junit, mapping)
    except (OSError, ET.ParseError) as problem:
        error = f"No readable test report at {junit} ({type(problem).__name__}): did pytest start at all?"
        rows = [Row(todo["number"], todo["name"], todo["function"]) for todo in mapping["todos"]]
        other = []
    text = markdown(rows, other, error)
    result = base64.b64encode(json.dumps(classroom(rows, error)).encode("utf-8")).decode("ascii")
    _append("GITHUB_STEP_SUMMARY", text)
    _append("GITHUB_OUTPUT", f"result={result}\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
