"""Plain records of a grading: one per rubric item, one for the whole run."""

from dataclasses import dataclass, field

from autograder.submission import LeftOut


@dataclass
class ItemResult:
    name: str  # "rnn_forward: output"
    function: str
    description: str  # what the item checks, from its check's docstring
    score: float
    max_score: float
    status: str  # "passed" or "failed"
    feedback: str = ""  # empty when passed
    output: str = ""  # what the student's code printed during the item (bounded)
    seconds: float = 0.0
    failure: str = ""  # why it failed ("wrong", "not done", "raised", "timeout", "crash", ...); "" when passed
    mistakes: list[str] = field(default_factory=list)  # the catalogue ids its feedback names
    measured: dict[str, object] = field(default_factory=dict)  # threshold items: accuracy, threshold, seeds


@dataclass
class GradingResult:
    items: list[ItemResult]
    execution_time: float
    environment: dict[str, object] = field(default_factory=dict)  # torch version, threads, seeds, isolation
    ignored: list[LeftOut] = field(default_factory=list)  # what of the submission was not read, and why (bounded)
    error: str = ""  # set when grading itself could not finish
    notice: str = ""  # what the reports say first (an explicit opt-out of isolation)
    more_ignored: int = 0  # files not read beyond those in `ignored`
    listing_cut: bool = False  # the listing of a huge tree stopped early: there may be more

    @property
    def score(self) -> float:
        return sum(item.score for item in self.items)

    @property
    def max_score(self) -> float:
        return sum(item.max_score for item in self.items)
