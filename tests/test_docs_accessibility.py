"""The documentation site for everyone: axe-core, in the system's Chromium, finds nothing critical, serious or
moderate on the built site's pages (issue 48), at a desktop's width and a phone's.

The site is built as tests/test_docs.py builds it and served from 127.0.0.1, as a reader's browser would get
it; Material's theme is fixed by mkdocs.yml's extra_css and extra_javascript and docs/hooks/accessibility.py.
"""

import functools
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from browser import opened, violations

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["", "security/", "grader/", "after-the-deadline/", "cli/"]  # the home page, prose, tables, long code
PHONE, DESKTOP = 390, 1200


class Quiet(SimpleHTTPRequestHandler):
    """The standard library's file server, without a line on stderr per request."""

    def log_message(self, format: str, *args: object) -> None:
        pass  # the test's output is axe's findings, not a line per request


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of the site as `mkdocs build --strict` writes it, served from 127.0.0.1 on a free port."""
    out = tmp_path_factory.mktemp("site")
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", "mkdocs.yml", "--site-dir", out]
    built = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        thread.join()


@pytest.mark.browser  # a browser start per page: a few seconds each
@pytest.mark.parametrize("width", [DESKTOP, PHONE])
@pytest.mark.parametrize("page", PAGES)
def test_axe_finds_nothing_critical_serious_or_moderate_on_the_docs(served, page, width):
    with opened(served + page, width) as visit:
        found = violations(visit.page)
        labelled = visit.page.locator(".md-search[role=dialog]").get_attribute("aria-label")
    assert found == [], f"/{page} at {width} px:\n" + "\n".join(found)
    assert visit.errors == []
    assert labelled  # the search dialog has a name (docs/hooks/accessibility.py)
