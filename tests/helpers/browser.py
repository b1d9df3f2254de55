"""The system's Chromium for the browser tests: Playwright drives it by `executable_path`, never its own download."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, sync_playwright

BLOCKING = ("critical", "serious", "moderate")  # axe-core's impacts a page must have none of (issue 48)
FLAGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


def browser() -> str:
    """The system's Chromium or Chrome: REPORT_BROWSER if set, else the first on PATH."""
    for name in (os.environ.get("REPORT_BROWSER"), "chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name) if name else None
        if found:
            return found
    message = "no Chromium or Chrome on PATH: apt-get install chromium (or set REPORT_BROWSER)"
    if os.environ.get("CI"):
        pytest.fail(message)  # .ci/run installs it and GitHub's runner has Chrome: never skipped in CI
    pytest.skip(message)


@dataclass
class Visit:
    """A page opened in the browser, with what it logged as an error and every address it asked for."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@contextmanager
def opened(url: str, width: int, height: int = 900) -> Iterator[Visit]:
    """`url` loaded in the system's headless Chromium, its errors and requests recorded from the start."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=browser(), args=FLAGS)
        try:
            page = chromium.new_page(viewport={"width": width, "height": height})
            visit = Visit(page)
            page.on("console", lambda message: visit.errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: visit.errors.append(str(error)))
            page.on("request", lambda request: visit.requests.append(request.url))
            page.goto(url, wait_until="load")
            yield visit
        finally:
            chromium.close()


def violations(page: Page) -> list[str]:
    """What axe-core (every rule, best practices included) finds on the page at BLOCKING impact, one line each:
    the rule, its impact, how many nodes and the first of them, to read in an assertion message."""
    found = Axe().run(page).response["violations"]
    return [
        f"{rule['id']} ({rule['impact']}, {len(rule['nodes'])} nodes: {[node['target'] for node in rule['nodes'][:5]]})"
        for rule in found
        if rule["impact"] in BLOCKING
    ]
