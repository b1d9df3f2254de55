"""The HTML every static page of the grader shares (the class report, the similarity page): the
document's shell, with a Content-Security-Policy that forbids every request, and a table."""

from html import escape


def table(headings: list[str], rows: list[list[str]], table_id: str = "", numbers: tuple[int, ...] = ()) -> str:
    """A table whose cells are already HTML; the columns in `numbers` are right-aligned."""

    def cell(tag: str, column: int, content: str) -> str:
        return f'<{tag} class="number">{content}</{tag}>' if column in numbers else f"<{tag}>{content}</{tag}>"

    head = "".join(cell("th", column, escape(text)) for column, text in enumerate(headings))
    body = "".join("<tr>" + "".join(cell("td", c, text) for c, text in enumerate(row)) + "</tr>" for row in rows)
    identity = f' id="{table_id}"' if table_id else ""
    return f"<table{identity}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def document(title: str, policy: str, style: str, header: str, sections: dict[str, tuple[str, str]]) -> str:
    """A whole page: `header` (HTML) under the title, a contents list, then each section, keyed by its
    anchor, as (its title, its HTML)."""
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
<style>{style}</style>
</head>
<body>
<header><h1>{escape(title)}</h1>
{header}</header>
<nav><ol>{contents}</ol></nav>
{body}
</body>
</html>
"""
