"""The HTML every static page of the grader shares (the class report, the similarity page): the
document's shell, with a Content-Security-Policy that forbids every request, and a table.

The shell is built to pass axe-core (issue 48; the browser tests run it): every piece of content inside a
landmark (the header, the contents' nav, the main part), every table's header cells named, and every
table in a labelled region that scrolls sideways on its own, reachable by the keyboard, where a phone's
screen is narrower than the table, so that the page itself never does.
"""

from html import escape

STYLE = """
h1, h2, h3, h4, h5, p, li, summary { overflow-wrap: anywhere; }  /* a long name breaks, not the phone's page */
.table-scroll { overflow-x: auto; margin: .6rem 0; }
.table-scroll:focus-visible { outline: 2px solid #1a5fb4; outline-offset: 2px; }
.table-scroll table { margin: 0; }
details > summary { cursor: pointer; }
@media (max-width: 40rem) { body { padding: .8rem; } }
@media print { .table-scroll { overflow: visible; } }  /* paper does not scroll: the whole table is printed */
"""


def table(
    headings: list[str], rows: list[list[str]], table_id: str = "", numbers: tuple[int, ...] = (), *, label: str
) -> str:
    """A table whose cells are already HTML, in a region named `label` (plain text) that scrolls sideways when
    the screen is narrower than the table; the columns in `numbers` are right-aligned."""

    def cell(tag: str, column: int, content: str) -> str:
        return f'<{tag} class="number">{content}</{tag}>' if column in numbers else f"<{tag}>{content}</{tag}>"

    if not all(text.strip() for text in headings):
        raise ValueError(f"a table's every column needs a heading (a screen reader reads it out): {headings}")
    head = "".join(cell("th", column, escape(text)) for column, text in enumerate(headings))
    body = "".join("<tr>" + "".join(cell("td", c, text) for c, text in enumerate(row)) + "</tr>" for row in rows)
    identity = f' id="{table_id}"' if table_id else ""
    # tabindex: a keyboard reaches the region to scroll it; role and label: a screen reader says what it is
    return (
        f'<div class="table-scroll" role="region" aria-label="{escape(label)}" tabindex="0">'
        f"<table{identity}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def document(title: str, policy: str, style: str, header: str, sections: dict[str, tuple[str, str]]) -> str:
    """A whole page: `header` (HTML) under the title, a contents list, then each section, keyed by its
    anchor, as (its title, its HTML), in the page's main part."""
    contents = "".join(f'<li><a href="#{key}">{escape(heading)}</a></li>' for key, (heading, _) in sections.items())
    body = "\n".join(
        f'<section id="{key}"><h2>{escape(heading)}</h2>\n{html}\n</section>'
        for key, (heading, html) in sections.items()
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{style}{STYLE}</style>
</head>
<body>
<header><h1>{escape(title)}</h1>
{header}</header>
<nav aria-label="Contents"><ol>{contents}</ol></nav>
<main>
{body}
</main>
</body>
</html>
"""
