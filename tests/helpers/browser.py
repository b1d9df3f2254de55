"""The system's Chromium for the browser tests: Playwright drives it by `executable_path`, never its own download."""

import os
import shutil

import pytest

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
