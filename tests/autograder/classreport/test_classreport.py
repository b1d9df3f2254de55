"""`autograde report`: what the class got wrong, from the structured parts of a roster's results.

The roster here is written, not graded (results built item by item, as the grader records them),
so every count is known in advance; the browser test grades a real one from the corpus.
"""

import statistics
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support import rubric_file

from autograder import cli, rubric, stubs
from autograder.checks.catalogue import CATALOGUE
from autograder.classreport import data, summary
from autograder.grading import writers
from autograder.grading.grade import failed_grading
from autograder.grading.results import Credited, GradingResult, ItemResult
from autograder.sandbox import record as isolation_record
from autograder.sandbox.state import Layer

ONLY = ["gather_final", "masked_mean", "next_token_loss"]
SELECTED = rubric.load().select(ONLY)
THRESHOLD_ITEM = "next_token_loss: trains the pattern model"
THRESHOLD = SELECTED.recipe("next_token_loss", "trains_the_pattern_model").threshold
HOSTILE = "<script>alert(1)</script>"  # a student's name as a results folder may give it
UNGRADED_HOSTILE = "<img src=x onerror=alert(2)>"
GATHER, MEAN, LOSS = (  # "TODO 4 · gather-at-final-index", ...: the TODOs' labels, as the generator numbers them
    next(todo.label for todo in stubs.todos() if todo.function == function) for function in ONLY
)


def above(margin: float) -> float:
    """An accuracy `margin` of the way from the threshold item's threshold to 1: over it, whatever the record says."""
    return THRESHOLD + margin * (1 - THRESHOLD)


def accuracy(value: float) -> dict:
    return {"accuracy": value, "threshold": THRESHOLD, "seeds": [0, 1, 2], "seed_accuracies": [value] * 3}


def graded(changes: dict[str, tuple[str, list[str]]], measured: float | None, **environment) -> GradingResult:
    """Every item at full marks except `changes` (item -> (failure, mistakes named)), which score 0."""
    items = []
    for item in SELECTED.items:
        failure, mistakes = changes.get(item.name, ("", []))
        feedback = "".join(CATALOGUE[m].feedback + "\n" for m in mistakes) + ("differs" if failure else "")
        result = ItemResult(
            item.name,
            item.function,
            "",
            0 if failure else item.points,
            item.points,
            "failed" if failure else "passed",
            feedback,
            failure=failure,
            mistakes=mistakes,
        )
        if item.name == THRESHOLD_ITEM and measured is not None:
            result.measured = accuracy(measured)
        items.append(result)
    isolation = environment.pop("isolation", IN_FORCE).as_dict()
    return GradingResult(
        items, 10.0, {"grader_version": "0.1.0", "torch_version": "2.13.0", "isolation": isolation, **environment}
    )


IN_FORCE = isolation_record.Isolation(
    separate_user=True,
    no_network=True,
    mechanisms={"separate_user": ["uid"], "no_network": ["landlock"]},
    layers={"uid": Layer.on("uid 61000-64999"), "landlock": Layer.on("landlock abi 7", abi=7)},
)
LANDLOCK_FAILED = isolation_record.Isolation(
    separate_user=True,
    mechanisms={"separate_user": ["uid"]},
    layers={"uid": Layer.on("uid 61000-64999"), "landlock": Layer.failed("create_ruleset: ENOSYS", abi=7)},
    failures=[isolation_record.Failure("landlock", "create_ruleset: ENOSYS")],
)
WRONG_LOSS = {
    name: ("wrong", ["S1"])
    for name in ("next_token_loss: values", "next_token_loss: padding", "next_token_loss: gradients")
} | {"next_token_loss: legal inputs": ("wrong", [])}
WRONG_GATHER = {"gather_final: values": ("wrong", ["G1"]), "gather_final: legal inputs": ("wrong", [])}
WRONG_MEAN = {"masked_mean: values": ("wrong", ["G3"]), "masked_mean: legal inputs": ("wrong", [])}
# each graded student's items lost (every other at full marks) and accuracy on the threshold item (eve's crashed)
LOST = {
    "ada": {**WRONG_GATHER, **WRONG_LOSS, THRESHOLD_ITEM: ("wrong", [])},
    "bob": WRONG_GATHER,
    "cy": WRONG_MEAN,
    "dee": {},
    "eve": {
        "gather_final: values": ("timeout", []),
        "gather_final: legal inputs": ("wrong", []),
        THRESHOLD_ITEM: ("crash", []),
    },
    HOSTILE: WRONG_MEAN,
}
ACCURACY = {"ada": THRESHOLD / 20, "bob": above(0.65), "cy": above(0.6), "dee": above(0.55), HOSTILE: above(0.75)}
ROSTER = {
    "ada": graded(LOST["ada"], ACCURACY["ada"]),
    "bob": graded(LOST["bob"], ACCURACY["bob"]),
    "cy": graded(LOST["cy"], ACCURACY["cy"], isolation=LANDLOCK_FAILED, isolation_required=False),
    "dee": graded(LOST["dee"], ACCURACY["dee"], grader_version="0.0.9"),
    "eve": graded(LOST["eve"], None),
    "fay": failed_grading(SELECTED, "the grading process was killed by SIGKILL; see grader.log", 700.0),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    for name, result in ROSTER.items():
        (folder / name).mkdir()
        writers.write_results_json(result, folder / name / "results.json")
    (folder / "gus").mkdir()
    (folder / "gus" / "results.json").write_text('{"tests": [')
    (folder / "gus" / "student").write_text(UNGRADED_HOSTILE)
    (folder / "ivy").mkdir()
    writers.write_results_json(graded(LOST[HOSTILE], ACCURACY[HOSTILE]), folder / "ivy" / "results.json")
    (folder / "ivy" / "student").write_text(HOSTILE)
    return folder


@pytest.fixture(scope="module")
def report(results: Path) -> data.ClassReport:
    return data.build(results, SELECTED, roster=["hal"])


def test_it_counts_each_named_mistake_once_per_student_most_students_first(report):
    found = [(m.id, m.students) for m in report.misconceptions]
    assert found == [("G1", ["ada", "bob"]), ("G3", [HOSTILE, "cy"]), ("S1", ["ada"])]  # ties: the catalogue's order
    g1 = report.misconceptions[0]
    assert (g1.function, g1.lesson, g1.explanation) == (
        "gather_final",
        CATALOGUE["G1"].lesson,
        CATALOGUE["G1"].explanation,
    )
    assert g1.example.startswith("[G1] ")


def total_without(lost: dict) -> float:
    """The total of a student who lost the items in `lost` and scored every other: the records' points."""
    return SELECTED.total - sum(item.points for item in SELECTED.items if item.name in lost)


def test_it_counts_graded_and_ungraded_students_and_says_why(report):
    totals = {one.name: one.total for one in report.graded}
    expected = {name: total_without(lost) for name, lost in LOST.items()}
    assert totals == expected
    assert report.max_score == SELECTED.total and report.median == statistics.median(expected.values())
    why = {one.name: one.error for one in report.ungraded}
    assert set(why) == {"fay", UNGRADED_HOSTILE, "hal"}
    assert "killed by SIGKILL" in why["fay"] and "unreadable" in why[UNGRADED_HOSTILE] and "no results" in why["hal"]


def test_it_ranks_todos_and_items_by_the_share_of_full_marks_worst_first(report):
    todos = [(share.label, share.full, share.graded) for share in report.todos]
    assert todos == [
        (GATHER, 3, 6),
        (MEAN, 4, 6),
        (LOSS, 4, 6),
    ]
    assert [share.label for share in report.items][:5] == [  # ties: the rubric's order
        "gather_final: values",
        "gather_final: legal inputs",
        "masked_mean: values",
        "masked_mean: legal inputs",
        THRESHOLD_ITEM,
    ]
    assert [share.fraction for share in report.items] == sorted(share.fraction for share in report.items)


def test_it_keeps_each_students_accuracy_on_a_threshold_item_and_who_has_none(report):
    (item,) = report.thresholds
    assert (item.item, item.threshold) == (THRESHOLD_ITEM, THRESHOLD)
    assert item.accuracies == ACCURACY
    assert item.without == ["eve"] and item.reached == len(ACCURACY) - 1  # all but ada


def test_it_lists_the_students_to_look_at(report):
    found = {
        heading: [(entry.student, entry.reason) for entry in entries] for heading, entries in report.look_at.items()
    }
    assert [name for name, _ in found["Without a grade"]] == [UNGRADED_HOSTILE, "fay", "hal"]
    assert found["Timed out, crashed or erred"] == [
        ("eve", "gather_final: values: timed out"),
        ("eve", f"{THRESHOLD_ITEM}: crashed"),
    ]
    assert found["0 on a whole TODO"] == [
        (HOSTILE, f"0 on {MEAN} (wrong)"),
        ("ada", f"0 on {GATHER} (wrong)"),
        ("ada", f"0 on {LOSS} (wrong)"),
        ("bob", f"0 on {GATHER} (wrong)"),
        ("cy", f"0 on {MEAN} (wrong)"),
        ("eve", f"0 on {GATHER} (timeout, wrong)"),
    ]


def test_it_counts_the_versions_and_in_words_the_isolation_layers_protections_and_failures(report):
    state = report.health
    assert state.versions["grader_version"] == {"0.1.0": 6, "0.0.9": 1}
    isolation = state.isolation
    assert isolation.recorded == 6
    assert isolation.layers == {"uid 61000-64999": 6, "landlock abi 7": 5}
    assert isolation.protections == {data.PROTECTIONS["separate_user"]: 6, data.PROTECTIONS["no_network"]: 5}
    assert isolation.failures == {"landlock: create_ruleset: ENOSYS": 1} and isolation.not_required == 1
    assert sorted(state.seconds) == [10.0] * 6 + [700.0] and state.slowest[0] == ("fay", 700.0)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def written(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    roster = out / "roster.txt"
    roster.write_text("course/hal\n")
    assert cli.main(["report", str(results), "--out", str(out), "--only", ",".join(ONLY), "--roster", str(roster)]) == 0
    return out


def test_it_writes_one_page_that_runs_no_script_and_fetches_nothing(written):
    text = (written / "report.html").read_text()
    parser = Tags()
    parser.feed(text)
    names = {tag for tag, _ in parser.tags}
    assert names.isdisjoint({"script", "iframe", "object", "embed", "link", "img", "base", "form"})
    policy = next(
        attrs["content"] for tag, attrs in parser.tags if attrs.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in policy
    links = [attrs.get("href") or attrs.get("xlink:href") or attrs.get("src") for _, attrs in parser.tags]
    assert all(link.startswith("#") for link in links if link), [link for link in links if link]
    assert "@import" not in text and "url(" not in text.replace("url(#", "")
    ids = [attrs["id"] for _, attrs in parser.tags if "id" in attrs]
    assert len(ids) == len(set(ids)), "an id used twice: charts would borrow each other's clip paths"
    assert sum(tag == "svg" for tag, _ in parser.tags) == 3  # the totals, the TODOs, the threshold item


def test_it_escapes_every_text_that_came_from_a_results_folder(written):
    text = (written / "report.html").read_text()
    assert HOSTILE not in text and UNGRADED_HOSTILE not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "&lt;img src=x onerror=alert(2)&gt;" in text
    assert "course/hal" in text  # the roster's student without results


def test_it_tables_the_misconceptions_in_markdown_for_the_job_summary(written):
    misconceptions, _ = (written / "misconceptions.md").read_text().split("## Items that tell you little")
    rows = [line for line in misconceptions.splitlines() if line.startswith("| ") and not line.startswith("| id")]
    assert [row.split(" | ")[0:3] for row in rows] == [
        ["| G1", "`gather_final`", "2 (33%)"],
        ["| G3", "`masked_mean`", "2 (33%)"],
        ["| S1", "`next_token_loss`", "1 (17%)"],
    ]


def test_it_tables_only_the_ten_most_named_mistakes(tmp_path):
    ids = list(CATALOGUE)[:12]
    for number, mistake in enumerate(ids):
        result = graded({"gather_final: values": ("wrong", [mistake])}, 0.9)
        (tmp_path / f"s{number}").mkdir()
        writers.write_results_json(result, tmp_path / f"s{number}" / "results.json")
    text = summary.misconception_table(data.build(tmp_path, SELECTED))
    assert [line.split(" | ")[0][2:] for line in text.splitlines() if line.startswith("| ")][1:] == ids[:10]
    assert "... and 2 more in `report.html`." in text


def without(module: str, *arguments: str) -> subprocess.CompletedProcess:
    """`autograde ARGUMENTS` in a Python where importing `module` fails, as when its extra is not installed."""
    code = f"import sys; sys.modules[{module!r}] = None; from autograder import cli; sys.exit(cli.main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True, timeout=120)


def test_it_says_which_extra_to_install_when_matplotlib_is_missing(results, tmp_path):
    done = without("matplotlib", "report", str(results), "--out", str(tmp_path))
    assert done.returncode == 2 and "python -m pip install -e '.[report]'" in done.stderr
    assert not (tmp_path / "report.html").exists()


def test_the_nbgrader_command_names_its_extra_when_nbgrader_is_missing(tmp_path):
    done = without("nbformat", "nbgrader", str(tmp_path / "course"))
    assert done.returncode == 2 and "python -m pip install -e '.[nbgrader]'" in done.stderr


def test_it_refuses_a_results_folder_that_is_not_there(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    assert f"RESULTS does not exist: {tmp_path / 'nowhere'}" in capsys.readouterr().err


def test_grade_all_writes_the_report_beside_the_gradebook_even_when_nobody_could_be_graded(tmp_path):
    (tmp_path / "submissions" / "dee").mkdir(parents=True)  # nothing to grade (an empty roster is refused)
    assert cli.main(["grade-all", str(tmp_path / "submissions"), "--out", str(tmp_path / "results")]) == 0
    written = {path.name for path in (tmp_path / "results").iterdir() if path.is_file()}
    assert written == {"gradebook.csv", "overview.md", "report.html", "misconceptions.md"}
    assert "<strong>0 graded</strong>" in (tmp_path / "results" / "report.html").read_text()


def test_it_says_what_the_courses_policies_did_and_counts_credited_items_apart(tmp_path):
    section = rubric_file(tmp_path / "section.toml", "[late]\nper_day = 0.10\nmax_days = 3\n\n[credit]\nG1 = 0.25\n")
    policies = rubric.load(section).select(ONLY)
    gather = next(item for item in policies.items if item.function == "gather_final")
    kept = Credited("G1", policies.credit.fractions["G1"], gather.points * policies.credit.fractions["G1"])
    results = tmp_path / "results"
    students = {
        "ada": "2026-12-04T20:00:00+01:00",
        "bo": "2026-12-04T20:00:00+01:00",
        "cy": "2026-12-06T11:59:00+01:00",
    }
    for name, committed in students.items():  # ada and cy made G1 (credited), cy 1.5 days late
        result = graded({gather.name: ("wrong", ["G1"])} if name != "bo" else {}, 0.9)
        for item in result.items:
            if item.name == gather.name and name != "bo":
                item.score, item.credited = kept.points, kept
        (results / name).mkdir(parents=True)
        writers.write_results_json(result, results / name / "results.json")
        record = {"deadline": "2026-12-04T23:59:00+01:00", "commit": name * 8, "commit-time": committed}
        for file, text in record.items():
            (results / name / file).write_text(text + "\n")
    report = data.build(results, policies)
    share = next(share for share in report.items if share.label == gather.name)
    assert (share.full, share.credited, share.graded) == (1, 2, 3), "a credited item is not full marks"
    assert next(share for share in report.todos if share.label == GATHER).credited == 2
    raw = policies.total - gather.points + kept.points
    cy = next(one for one in report.graded if one.name == "cy")
    assert (cy.total, cy.late.days_late, cy.late.raw_total) == (raw - policies.late.penalty(raw, 2), 2, raw)
    assert [one.name for one in report.graded if one.late] == ["cy"]
    out = tmp_path / "report"
    arguments = ["report", str(results), "--out", str(out), "--only", ",".join(ONLY), "--rubric", str(section)]
    assert cli.main(arguments) == 0
    page = (out / "report.html").read_text()
    assert f"Late work (the rubric's [late]): {rubric.late_policy(policies.late)}." in page
    assert '<td>cy</td><td class="number">2</td>' in page and "was made 1 day 12 h after the deadline" in page
    assert "Credit by named mistake (the rubric's [credit]): G1 keeps 25% of an item" in page
    assert "2 items scored by it" in page and '<th class="number">credited</th>' in page


def test_without_the_policies_the_page_has_neither_their_paragraphs_nor_the_credited_column(written):
    page = (written / "report.html").read_text()
    assert "Late work" not in page and "Credit by named mistake" not in page and ">credited<" not in page


def test_its_health_section_says_the_isolation_in_words_not_raw_keys(written):
    text = (written / "report.html").read_text()
    health = text[text.index('<section id="health">') :]
    health = health[: health.index("</section>")]
    assert "Layers in force: uid 61000-64999 (6 of 6); landlock abi 7 (5 of 6)." in health
    assert "Layers that failed to start, and why: landlock: create_ruleset: ENOSYS (1 of 6)." in health
    assert f"{data.PROTECTIONS['no_network']} (5 of 6)" in health and "1 graded with isolation not required" in health
    assert "layers." not in health and "separate_user" not in health, "no raw key of results.json"
