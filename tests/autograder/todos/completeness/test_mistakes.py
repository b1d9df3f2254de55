"""`autograde todo check`, the mistakes: each variant of a function loses an item naming its mistake, and a
mistake without a variant, a variant making none or naming none, or a variant of another function's mistake is named."""

import inspect
import re
from pathlib import Path

from autograder import rubric, todos
from autograder.checks.variants import Table
from autograder.locations import ROOT
from autograder.todos.completeness import Finding, Status, mistakes

LSTM = todos.record("lstm_step")
LSTM_TABLE = mistakes.table_of(LSTM)  # its variants, as the checkout holds them


def missing(findings: list[Finding]) -> list[str]:
    return [finding.words for finding in findings if finding.status == Status.MISSING]


def lstm_table(**options: dict) -> Table:
    """lstm_step's variants with `options` in place of its own (an option of {} makes no mistake)."""
    return Table(LSTM_TABLE.implementation, options)


def test_each_variant_of_lstm_step_loses_an_item_that_names_its_mistake():
    found = mistakes.mistake_findings(LSTM, rubric.load())
    assert [finding.status for finding in found] == [Status.OK] and "(L1, L2, L3, L4)" in found[0].words


def test_a_catalogued_mistake_without_a_variant_is_missing_saying_where_to_add_it(monkeypatch):
    table = LSTM_TABLE
    kept = {key: options for key, options in table.options.items() if not key.startswith("L4")}
    monkeypatch.setattr(mistakes, "table_of", lambda found: lstm_table(**kept))
    said = missing(mistakes.mistake_findings(LSTM, rubric.load()))
    assert len(said) == 1 and re.fullmatch(r"mistake L4 has no variant: add it to \S+\.py's table", said[0]), said


def test_a_variant_that_makes_no_mistake_is_missing_saying_no_item_tells_it_apart(monkeypatch):
    table = LSTM_TABLE
    monkeypatch.setattr(mistakes, "table_of", lambda found: lstm_table(**{**table.options, "L4": {}}))
    assert missing(mistakes.mistake_findings(LSTM, rubric.load())) == [
        "variant L4 loses no item: the checks cannot tell it from the reference (fix it, or add an item)"
    ]


def test_a_variant_whose_mistake_the_catalogue_does_not_give_the_function_is_missing(monkeypatch):
    table = LSTM_TABLE
    monkeypatch.setattr(mistakes, "table_of", lambda found: lstm_table(**table.options, **{"G1": {}}))
    said = missing(mistakes.mistake_findings(LSTM, rubric.load()))
    assert said[0].startswith("variant G1 is of G1, a mistake the catalogue does not give lstm_step")


def test_a_variant_whose_lost_items_name_another_mistake_is_missing_saying_which_checks_to_change(monkeypatch):
    table = LSTM_TABLE
    monkeypatch.setattr(mistakes, "table_of", lambda found: lstm_table(**{**table.options, "L3": table.options["L4"]}))
    values = Path(inspect.getsourcefile(todos.check("lstm_step", "values"))).resolve().relative_to(ROOT.resolve())
    assert missing(mistakes.mistake_findings(LSTM, rubric.load())) == [
        "variant L3 loses values, but no feedback names [L3]: make a check of those items recognise it "
        f"({values.as_posix()})"
    ]
