"""results.json records the rubric a grading used; the gradebook, the report and a merge grade by that one."""

import json
from pathlib import Path

import pytest
from support import rubric_file

from autograder import rubric
from autograder.grading import rubric_record, writers
from autograder.grading.grade import failed_grading
from autograder.roster import gradebook

LATE = '[late]\nper_day = 0.10\nmax_days = 3\nkeep = "latest"\n'


def graded(folder: Path, by: rubric.Rubric) -> Path:
    """A grading's folder whose results.json records `by`, as every grading does (a grading that could not run)."""
    folder.mkdir(parents=True)
    writers.write_results_json(failed_grading(by, "nothing to read", 0.0), folder / "results.json")
    return folder


def test_it_records_the_rubrics_whole_text_and_its_sha256_beside_the_fingerprint(tmp_path):
    section = rubric.load(rubric_file(tmp_path / "section.toml", LATE))
    extra = json.loads((graded(tmp_path / "ada", section) / "results.json").read_text())["extra_data"]
    assert extra["rubric"] == {"sha256": rubric_record.sha256(section.text), "text": section.text}
    assert "fingerprint" in extra


def test_it_reads_no_rubric_from_a_record_whose_hash_its_text_belies():
    document = {"extra_data": {"rubric": {"sha256": rubric_record.sha256("total = 1\n"), "text": "total = 2\n"}}}
    assert rubric_record.recorded(document) is None
    assert rubric_record.recorded({"extra_data": {}}) is None


def test_the_gradings_rubric_is_used_when_none_is_given(tmp_path):
    section = rubric.load(rubric_file(tmp_path / "section.toml", LATE))
    graded(tmp_path / "results" / "ada", section)
    used = rubric_record.graded_by([tmp_path / "results"])
    assert used.text == section.text and used.late == section.late


def test_the_same_rubric_given_is_accepted_and_another_refused_in_one_line(tmp_path):
    given = rubric_file(tmp_path / "section.toml", LATE)
    graded(tmp_path / "results" / "ada", rubric.load(given))
    assert rubric_record.graded_by([tmp_path / "results"], given).late is not None
    with pytest.raises(rubric.RubricError) as refused:
        rubric_record.graded_by([tmp_path / "results"], rubric.RUBRIC)
    assert "is not the rubric these gradings were graded by" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_gradings_by_two_rubrics_are_refused_naming_how_many_each_graded(tmp_path):
    graded(tmp_path / "results" / "ada", rubric.load(rubric_file(tmp_path / "section.toml", LATE)))
    graded(tmp_path / "results" / "bo", rubric.load())
    graded(tmp_path / "results" / "bo" / gradebook.ON_TIME, rubric.load())
    with pytest.raises(rubric.RubricError, match=r"graded by 2 different rubrics .* by 2 .* by 1 "):
        rubric_record.graded_by([tmp_path / "results"])


def test_gradings_that_record_no_rubric_are_read_by_the_given_one_or_the_graders_own(tmp_path):
    folder = graded(tmp_path / "results" / "ada", rubric.load())
    document = json.loads((folder / "results.json").read_text())
    del document["extra_data"]["rubric"]  # an older grader's results.json
    (folder / "results.json").write_text(json.dumps(document))
    assert rubric_record.graded_by([tmp_path / "results"]).text == rubric.load().text
    given = rubric_file(tmp_path / "section.toml", LATE)
    assert rubric_record.graded_by([tmp_path / "results"], given).late is not None
