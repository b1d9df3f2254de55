"""How reports write numbers and student text: one way for each, whatever the report.

Numbers: `number` for text (tables, Markdown, CSV, HTML), `json_number` for results.json. What a
call site needs is said at the call: `places` where a score is shown as results.json holds it,
`missing` for what stands in a cell without a value. Standard library only.
"""


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
