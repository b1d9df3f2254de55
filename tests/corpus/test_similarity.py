"""The similarity corpus: copies disguised every way a copier does rank above every pair of independent students.

The roster is tests/corpus/similarity/roster.toml's (built by tests/helpers/similarity_corpus.py):
independent students from the correct functions of tests/corpus/correct/ (each student's module the stub
with the files the roster lists for it after it, so a new file there moves no student) and modules written for it,
copies of them each disguised one way (renaming, reformatting, reordering, dead code, for <-> while,
comprehension <-> loop, helpers extracted or inlined, a copy of only some functions, all at once), a copy of the
reference, and an untouched fork. Comparing is pure data work: the whole roster takes seconds.
"""

import re
import shutil
from pathlib import Path

import pytest
from similarity_attacks import long_line
from similarity_corpus import students, write_roster

from autograder.locations import EXERCISES
from autograder.similarity import compare
from autograder.similarity.run import run

STUDENTS = {student.name: student for student in students()}
COPIES = {frozenset((s.name, source)) for s in STUDENTS.values() for source in s.copies if source != "solutions"}
COPIERS = sorted(s.name for s in STUDENTS.values() if s.copies and s.copies != ("solutions",))
INDEPENDENT = sorted(s.name for s in STUDENTS.values() if not s.copies)
FUNCTION_FILES = [path for s in STUDENTS.values() for files in s.function_files.values() for path in files]
HEADER = re.compile(r"# module: (\w+)  function: (\w+)\n")


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    return run(write_roster(tmp_path_factory.mktemp("roster"), EXERCISES), []).similarity


def _others(found):
    return [pair for pair in found.pairs if frozenset((pair.a, pair.b)) not in COPIES]


@pytest.mark.parametrize("copier", COPIERS)
def test_it_ranks_each_copy_above_every_pair_that_is_not_one(found, copier):
    closest_other = max(_others(found), key=lambda pair: pair.score)
    for source in STUDENTS[copier].copies:
        pair = next(pair for pair in found.pairs if {pair.a, pair.b} == {copier, source})
        assert pair.score > closest_other.score, (STUDENTS[copier].disguise, pair, closest_other.a, closest_other.b)


def test_it_calls_every_copy_close_and_no_pair_of_independent_students(found):
    close = {frozenset((pair.a, pair.b)) for pair in found.pairs if pair.score >= compare.CLOSE}
    assert close == COPIES


def test_it_reports_the_copy_of_the_reference_under_known_with_source_solutions(found):
    assert [(match.student, match.source, match.author) for match in found.known] == [("rex", "solutions", "solutions")]
    assert {match.function for match in found.known[0].functions} >= {"recurrence.rnn_forward", "language_model.sample"}


def test_it_finds_the_untouched_fork_close_to_nobody(found):
    pairs = [pair for pair in found.pairs if "untouched" in (pair.a, pair.b)]
    assert len(pairs) == len(STUDENTS) - 1
    assert all(pair.score == 0 and pair.functions == () for pair in pairs)
    assert found.authors["untouched"].functions == {}, "the stubs' text is never shown as the student's"


def test_it_lists_every_pair_of_a_roster_of_up_to_a_hundred_highest_first(found):
    assert len(found.pairs) == len(STUDENTS) * (len(STUDENTS) - 1) // 2
    assert [pair.score for pair in found.pairs] == sorted((pair.score for pair in found.pairs), reverse=True)


def test_it_finds_the_three_who_share_a_function_as_a_cluster_and_no_other(found):
    assert found.clusters == (("ada", "renaming", "trio"),)


def test_it_highlights_only_the_students_code_never_the_signature_or_docstring(found):
    pair = next(pair for pair in found.pairs if {pair.a, pair.b} == {"bea", "reformatting"})
    assert all(match.spans_a and match.spans_b for match in pair.functions if match.score > 0.5)
    for match in pair.functions:
        for key, spans in ((pair.a, match.spans_a), (pair.b, match.spans_b)):
            text = found.authors[key].functions[match.function]
            for span in spans:
                passage = text[span.start : span.end]
                assert 0 <= span.start < span.end <= len(text)
                assert "def " not in passage and '"""' not in passage and "#" not in passage.split("\n")[0], passage


def test_it_highlights_the_same_passage_on_both_sides_of_a_renamed_copy(found):
    pair = next(pair for pair in found.pairs if {pair.a, pair.b} == {"ada", "renaming"})
    match = next(match for match in pair.functions if match.function == "padding.gather_final")
    shown = {key: found.authors[key].functions[match.function] for key in (pair.a, pair.b)}
    passages = {
        key: [shown[key][s.start : s.end] for s in spans]
        for key, spans in ((pair.a, match.spans_a), (pair.b, match.spans_b))
    }
    assert passages["ada"] == [
        "B, T, H = output.shape",
        "index = (lengths - 1).reshape(B, 1, 1).repeat(1, 1, H)",
        "return torch.gather(output, dim=1, index=index)[:, 0, :]",
    ]
    assert passages["renaming"] == [
        "n, t, d = output.shape",
        "idx = (lengths - 1).reshape(n, 1, 1).repeat(1, 1, d)",
        "return torch.gather(output, dim=1, index=idx)[:, 0, :]",
    ]


def test_its_independent_students_are_all_in_the_corpus(found):
    assert len(INDEPENDENT) >= 4 and len(COPIERS) >= 9


@pytest.fixture(scope="module")
def with_a_long_line(tmp_path_factory):
    """The roster and mallory, whose gather_final calls a one-line helper of 64 KB: in ASCII, then with one `é`."""
    found = {}
    for character in ("a", "é"):
        roster = write_roster(tmp_path_factory.mktemp("roster"), EXERCISES)
        folder = roster / "mallory" / "exercises"
        shutil.copytree(EXERCISES, folder, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        module = long_line(64 * 1024, character, base=EXERCISES / "padding.py")
        (folder / "padding.py").write_text(module, encoding="utf-8")
        found[character] = run(roster, []).similarity
    return found


def test_a_long_line_outside_ascii_changes_no_pair_and_its_cut_is_reported(with_a_long_line):
    ascii, other = with_a_long_line["a"], with_a_long_line["é"]
    assert other.pairs == ascii.pairs and other.known == ascii.known and other.clusters == ascii.clusters
    assert {frozenset((pair.a, pair.b)) for pair in other.pairs if pair.score >= compare.CLOSE} == COPIES
    (cut,) = other.cut
    assert (cut.author, cut.function) == ("mallory", "padding.gather_final") and cut.compared < cut.length
    assert other.cut == ascii.cut and "'é'" in other.authors["mallory"].functions[cut.function]


def test_each_function_file_of_a_student_is_listed_once_and_holds_the_module_the_student_has_it_in():
    assert len(FUNCTION_FILES) == len(set(FUNCTION_FILES)) >= 20
    for student in STUDENTS.values():
        for module, files in student.function_files.items():
            for path in files:
                assert HEADER.match(path.read_text(encoding="utf-8"))[1] == module, (student.name, path.name)


@pytest.mark.parametrize("path", FUNCTION_FILES, ids=lambda path: path.stem)
def test_a_function_file_is_compared_as_its_own_code_never_the_stubs(found, path: Path):
    """The stub's own definition comes first in the module: the comparison reads the last, the student's."""
    text = path.read_text(encoding="utf-8")
    module, function = HEADER.match(text).groups()
    (student,) = [s.name for s in STUDENTS.values() if path in s.function_files.get(module, ())]
    shown = found.authors[student].functions
    # the key of a method is the class's and its own: "classifier.SequenceClassifier.forward"
    (key,) = [key for key in shown if key.split(".")[:2] == [module, function]]
    assert shown[key] in text
