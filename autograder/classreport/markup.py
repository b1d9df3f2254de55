"""The HTML pieces the class report's sections share: a table whose cells are already HTML."""

from html import escape


def table(headings: list[str], rows: list[list[str]], table_id: str = "", numbers: tuple[int, ...] = ()) -> str:
    """A table whose cells are already HTML; the columns in `numbers` are right-aligned."""

    def cell(tag: str, column: int, content: str) -> str:
        return f'<{tag} class="number">{content}</{tag}>' if column in numbers else f"<{tag}>{content}</{tag}>"

    head = "".join(cell("th", column, escape(text)) for column, text in enumerate(headings))
    body = "".join("<tr>" + "".join(cell("td", c, text) for c, text in enumerate(row)) + "</tr>" for row in rows)
    identity = f' id="{table_id}"' if table_id else ""
    return f"<table{identity}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
