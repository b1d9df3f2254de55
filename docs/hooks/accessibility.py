"""The search dialog given a name: Material's search is a role="dialog" without one (axe's aria-dialog-name).

An MkDocs hook (mkdocs.yml `hooks:`): each built page's search dialog gets a label (LABEL). The build fails
if the theme's markup moves, so the label is never silently lost; tests/test_docs_accessibility.py runs
axe-core on the built site.
"""

DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
LABEL = "Search the documentation"


def on_post_page(output: str, page, config) -> str:
    """MkDocs' hook: the page with its search dialog named."""
    if DIALOG not in output:
        raise ValueError(f"{page.file.src_uri}: Material's search dialog has changed; update {__name__}.DIALOG")
    return output.replace(DIALOG, DIALOG.replace('role="dialog"', f'role="dialog" aria-label="{LABEL}"'), 1)
