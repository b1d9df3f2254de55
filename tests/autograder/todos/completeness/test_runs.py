"""`autograde todo check`, its pytest runs: a case of a JUnit report is read with the first line of its failure."""

from autograder.todos.completeness import Outcome, runs


def test_an_outcome_of_a_junit_report_names_its_case_and_the_first_line_of_its_failure(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite><testcase classname="exercises.tests.test_recurrence" name="test_a[1]"/>'
        '<testcase classname="exercises.tests.test_recurrence" name="test_b">'
        '<failure message="AssertionError: [L4] Your step unpacks c, h&#10;  Reread: Day 2">...</failure>'
        "</testcase></testsuite></testsuites>"
    )
    assert runs.outcomes(report) == [
        Outcome("test_recurrence::test_a[1]", True),
        Outcome("test_recurrence::test_b", False, "AssertionError: [L4] Your step unpacks c, h"),
    ]
