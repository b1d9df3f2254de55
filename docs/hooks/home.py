"""The site's home page is the README: one text for the repository's front page and the site's.

An MkDocs hook (mkdocs.yml `hooks:`): docs/index.md holds a marker, replaced by README.md with its
links into docs/ made relative to the site (`docs/grader.md` is `grader.md` there), so that a link
the README gets wrong fails `mkdocs build --strict` as any page's would.
"""

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- the home page is README.md (docs/hooks/home.py) -->"
PAGE = "index.md"


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs' hook: the home page's marker replaced by the README; every other page as it is."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{PAGE} has lost its marker {MARKER!r}")
    return markdown.replace(MARKER, README.read_text(encoding="utf-8").replace("](docs/", "]("))
