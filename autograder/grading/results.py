"""Plain records of a grading: one per rubric item, one for the whole run."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Credited:
    """Points the rubric's [credit] kept for an item that failed naming exactly one mistake (its raw score: 0)."""

    mistake: str  # the catalogue id, "R1"
    fraction: float  # of the item's points
    points: float  # what the item scores


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
    credited: Credited | None = None  # set when the rubric's [credit] gave the score


@dataclass
class GradingResult:
    items: list[ItemResult]
    execution_time: float
    environment: dict[str, object] = field(default_factory=dict)  # torch version, threads, seeds, isolation
    ignored: list[str] = field(default_factory=list)  # submission files left out of the copy
    error: str = ""  # set when grading itself could not finish
    notice: str = ""  # what the reports say first (an explicit opt-out of isolation)

    @property
    def score(self) -> float:
        return sum(item.score for item in self.items)

    @property
    def max_score(self) -> float:
        return sum(item.max_score for item in self.items)
