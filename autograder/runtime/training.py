"""The grader's own training recipe for the threshold items, run in the worker over the student's code.

The recipes are the lessons' (Adam, mini-batches, gradient norm clipped at 1.0,
fixed seeds); the numbers come from the rubric. Only predictions go back: the
labels of the evaluation rows never reach the worker. The student repository gets
this file as it is (`python -m exercises.check_training`): the same runs and the
same report, on data from other seeds, the forget gate opened by the student's own
set_forget_bias (forget_gate.py holds set_forget_bias's answer and stays here). In the worker the grader
sends the opened gate's biases with each run (`with_opened_gate`): the worker's copy of the
runtime holds no forget_gate.py for a student's set_forget_bias to import.
"""

import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from .language_model import LanguageModel
from .seeds import seed_cpu

EVAL_CHUNK = 1024
OPENED = "opened_forget_gate"  # a run's recipe key: the recurrent layer's biases, the forget gate opened


def train_classifier(
    resolve: Any,
    recipe: dict[str, Any],
    tokens: torch.Tensor,
    lengths: torch.Tensor | None,
    labels: torch.Tensor,
    eval_tokens: torch.Tensor,
    eval_lengths: torch.Tensor | None,
) -> torch.Tensor:
    """Train the student's SequenceClassifier with last-state pooling; predict the evaluation rows."""
    model = fit_classifier(resolve, recipe, tokens, lengths, labels)
    return predict_classifier(resolve, model, eval_tokens, eval_lengths)


def fit_classifier(
    resolve: Any,
    recipe: dict[str, Any],
    tokens: torch.Tensor,
    lengths: torch.Tensor | None,
    labels: torch.Tensor,
    after_epoch: Callable[[nn.Module], None] = lambda _: None,
) -> nn.Module:
    """The student's SequenceClassifier (last-state pooling) trained by the recipe on the labelled rows;
    `after_epoch` sees the model after each epoch."""
    model = None
    for model in classifier_epochs(resolve, recipe, tokens, lengths, labels):
        after_epoch(model)
    return model


def classifier_epochs(
    resolve: Any, recipe: dict[str, Any], tokens: torch.Tensor, lengths: torch.Tensor | None, labels: torch.Tensor
) -> Iterator[nn.Module]:
    """The recipe's epochs, one at a time: yields the model after each (a training can stop at any of them)."""
    seed_cpu(recipe["seed"])
    kind = resolve("classifier.SequenceClassifier")
    model = kind(vocab=10, embed=recipe["embed"], hidden=recipe["hidden"], cell=recipe["cell"], pooling="last")
    _open_forget_gate(model, recipe)
    optimizer = torch.optim.Adam(model.parameters(), lr=recipe["learning_rate"])
    order = torch.Generator().manual_seed(recipe["seed"])
    size = recipe["batch_size"]
    for _ in range(recipe["epochs"]):
        model.train()
        permutation = torch.randperm(len(tokens), generator=order)
        for start in range(0, len(tokens), size):
            rows = permutation[start : start + size]
            optimizer.zero_grad()
            logits = model(tokens[rows], None if lengths is None else lengths[rows])
            F.cross_entropy(logits, labels[rows]).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        yield model


def _open_forget_gate(model: nn.Module, recipe: dict[str, Any]) -> None:
    """The recipe's forget gate opened: the biases the grader sent with the run written in (`opened`), or, without
    them, forget_gate.py's (the grader's own in its process; the student's set_forget_bias in check_training)."""
    opened = recipe.get(OPENED)
    if opened is None:
        from .forget_gate import open_forget_gate  # never in the worker: set_forget_bias's answer

        open_forget_gate(model.rnn, recipe["forget_bias"])
        return
    parameters = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in opened.items():
            if name in parameters and parameters[name].shape == value.shape:  # another __init__: said by the grader
                parameters[name].copy_(value)


def with_opened_gate(run: "Run", initial: dict[str, torch.Tensor]) -> "Run":
    """The run with the recurrent layer's biases of `initial` (the model as the recipe starts it, forget gate
    opened, by the grader) sent along: the worker writes them in instead of opening the gate itself."""
    biases = {name: value for name, value in initial.items() if name.startswith("rnn.bias")}
    return run._replace(args=({**run.args[0], OPENED: biases}, *run.args[1:]))


def trained_classifier(
    resolve: Any,
    recipe: dict[str, Any],
    tokens: torch.Tensor,
    lengths: torch.Tensor | None,
    labels: torch.Tensor,
    every_epoch: bool = False,
) -> dict[str, torch.Tensor] | list[dict[str, torch.Tensor]]:
    """The grading's training run: only the trained parameters go back, as plain tensors (the grader
    measures them itself: the evaluation rows never reach this process); with `every_epoch`, those
    after each epoch, so that a verdict can be taken at any of them."""
    states: list[dict[str, torch.Tensor]] = []
    fit_classifier(resolve, recipe, tokens, lengths, labels, lambda model: states.append(_parameters(model)))
    return states if every_epoch else states[-1]


def _parameters(model: nn.Module) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


class _Training:
    """One seed's training in progress in this process, resumed call after call exactly as if it never paused:
    the global random state it leaves is kept and given back before it goes on (each call resets it)."""

    def __init__(self, epochs: Iterator[nn.Module]) -> None:
        self.epochs, self.rng, self.model = epochs, None, None

    def advance(self, count: int) -> dict[str, torch.Tensor]:
        if self.rng is not None:
            torch.set_rng_state(self.rng)
        for _ in range(count):
            self.model = next(self.epochs, self.model)  # past the recipe's last epoch it stays as it is
        self.rng = torch.get_rng_state()
        return _parameters(self.model)


_TRAININGS: list[_Training] = []  # the current item's trainings, one per seed (one item's at a time)


def train_epochs(
    resolve: Any,
    epochs: int,
    runs: list[tuple[dict[str, Any], torch.Tensor, torch.Tensor | None, torch.Tensor]] | None = None,
    which: list[int] | None = None,
) -> list[dict[str, torch.Tensor]]:
    """Early stopping's training run: `runs` (recipe, tokens, lengths, labels per seed) start anew, forgetting
    any earlier; the trainings `which` (all when None) go on `epochs` more epochs. Only their parameters go
    back: the grader measures them on its own rows and asks again for those that must go on, so that one
    call serves every seed of an item at each epoch the recipe allows checking."""
    if runs is not None:
        _TRAININGS[:] = [_Training(classifier_epochs(resolve, *run)) for run in runs]
    chosen = range(len(_TRAININGS)) if which is None else which
    return [_TRAININGS[index].advance(epochs) for index in chosen]


def predict_classifier(
    resolve: Any, model: nn.Module, tokens: torch.Tensor, lengths: torch.Tensor | None
) -> torch.Tensor:
    """The model's class for each row, in evaluation mode, in chunks."""
    model.eval()
    with torch.no_grad():
        chunks = [
            model(tokens[i : i + EVAL_CHUNK], None if lengths is None else lengths[i : i + EVAL_CHUNK])
            for i in range(0, len(tokens), EVAL_CHUNK)
        ]
    return torch.cat(chunks).argmax(dim=1)


def train_pattern_model(
    resolve: Any, recipe: dict[str, Any], tokens: torch.Tensor, eval_inputs: torch.Tensor
) -> torch.Tensor:
    """Train the grader's LSTM language model with the student's next_token_loss; predict each next token."""
    *_, model = pattern_epochs(resolve, recipe, tokens)  # its last epoch
    return predict_pattern(model, eval_inputs)


def pattern_epochs(resolve: Any, recipe: dict[str, Any], tokens: torch.Tensor) -> Iterator[LanguageModel]:
    """The pattern model's epochs, one at a time: yields the model after each (a training can stop at any)."""
    seed_cpu(recipe["seed"])
    loss_of = resolve("language_model.next_token_loss")
    model = LanguageModel(recipe["vocab"], recipe["embed"], recipe["hidden"])
    optimizer = torch.optim.Adam(model.parameters(), lr=recipe["learning_rate"])
    for _ in range(recipe["epochs"]):
        model.train()  # each epoch: a measure between two epochs leaves it in evaluation mode
        optimizer.zero_grad()
        loss = loss_of(model, tokens)
        if type(loss) is not torch.Tensor or loss.dim() != 0 or not loss.requires_grad:
            raise TypeError("next_token_loss must return a scalar tensor that carries gradients")
        loss.backward()
        _check_gradients_reach(model)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        yield model


def predict_pattern(model: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """The pattern model's guess of each next token, in evaluation mode."""
    model.eval()
    with torch.no_grad():
        logits, _ = model(inputs)
    return logits.argmax(dim=-1)


def _check_gradients_reach(model: nn.Module) -> None:
    """Fail the run when the loss moves no parameter: said before any guess from the accuracy (the shift)."""
    if not any(p.grad is not None and bool(p.grad.abs().sum()) for p in model.parameters()):
        raise TypeError(
            "next_token_loss's loss carries no gradient back to the model, so training changes nothing: is it "
            "built from Python numbers (.item(), float(), NumPy) and made a tensor again? Keep it a tensor "
            "computed from the model's logits (Day 6)"
        )


def train_steps(
    resolve: Any,
    model: nn.Module,
    batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
    optimizer: torch.optim.Optimizer,
    clip: tuple[float | None, ...],
    stale: float | None,
) -> list[tuple[Any, dict[str, torch.Tensor]]]:
    """The student's train_step called once per batch on the same model and optimizer, as a training loop does.

    `stale` fills every gradient before the first step (what an earlier backward left); `clip` is
    () for train_step's own default, else (clip,). Returns, per call, what it returned and the
    parameters after it (the step it took).
    """
    train_step = resolve("classifier.train_step")
    if stale is not None:
        for parameter in model.parameters():
            parameter.grad = torch.full_like(parameter, stale)
    steps = []
    for batch in batches:
        returned = train_step(model, batch, optimizer, *clip)
        steps.append((returned, {name: p.detach().clone() for name, p in model.named_parameters()}))
    return steps


# -- the data of a run, and the report on its accuracies --------------------------------------------
@dataclass(frozen=True)
class DataSeeds:
    """Where a run's rows come from: training rows from seed `train` + the run's seed, held-out rows from `held_out`."""

    train: int
    held_out: int


def kind(settings: dict[str, Any]) -> str:
    """'classifier' (full-length rows), 'padded' (rows of several lengths) or 'pattern' (the language model)."""
    if settings["task"] == "pattern":
        return "pattern"
    return "padded" if "max_length" in settings else "classifier"


class Run(NamedTuple):
    """One training run: the target that trains (a key of TARGETS), its arguments, the held-out labels."""

    target: str
    args: tuple[Any, ...]
    labels: torch.Tensor


def training_run(data: ModuleType, settings: dict[str, Any], seed: int, seeds: DataSeeds) -> Run:
    """One run of the recipe `settings` with `seed`; `data` is the week's data module."""
    run = {**settings, "seed": seed}
    if kind(settings) == "pattern":
        held_out = data.make_pattern(seed=seeds.held_out)
        inputs = (run, data.make_pattern(seed=seeds.train + seed), held_out[:, :-1])
        return Run("harness.train_pattern_model", inputs, held_out[:, 1:])
    if kind(settings) == "classifier":
        tokens, labels = data.make_sequences(settings["train_size"], seed=seeds.train + seed)
        eval_tokens, eval_labels = data.make_sequences(settings["eval_size"], seed=seeds.held_out)
        # the lengths given, every row's full length: lengths=None is a legal input graded by legal_inputs alone
        arguments = (run, tokens, _full_lengths(tokens), labels, eval_tokens, _full_lengths(eval_tokens))
        return Run("harness.train_classifier", arguments, eval_labels)
    low, high = settings["min_length"], settings["max_length"]
    tokens, lengths, labels = data.make_padded_sequences(settings["train_size"], low, high, seed=seeds.train + seed)
    eval_tokens, eval_lengths, eval_labels = data.make_padded_sequences(
        settings["eval_size"], low, high, seeds.held_out
    )
    # evaluation rows carry much more padding than training ever showed: only the gathered state ignores it
    extra = torch.zeros(len(eval_tokens), settings["eval_padded_to"] - high, dtype=torch.long)
    eval_tokens = torch.cat([eval_tokens, extra], dim=1)
    return Run("harness.train_classifier", (run, tokens, lengths, labels, eval_tokens, eval_lengths), eval_labels)


def _full_lengths(tokens: torch.Tensor) -> torch.Tensor:
    return torch.full((len(tokens),), tokens.shape[1], dtype=torch.long)


# -- when a seed's training stops (the grader's rule, and the student's check's: docs/early-stopping.md) -------
@dataclass(frozen=True)
class Stop:
    """The stop rule: a seed's training stops at the end of the first epoch, among those the recipe allows
    checking (every `check_every`), at which the grader's own accuracy on its held-out rows reaches
    `threshold + stop_margin`; otherwise at the recipe's last epoch. With `decides_early` (the recipe's
    `seeds_decided_early`, on unless false; off for full-length trainings) a seed is trained only while the
    seeds trained so far leave the verdict undecided (checks/medians.py)."""

    epochs: int  # the recipe's last epoch
    every: int  # epochs between two checks
    level: float | None  # the accuracy that stops a training (None: it never stops early)
    decides_early: bool = False  # seeds the others made needless are not trained

    @classmethod
    def of(cls, settings: dict[str, Any], full_length: bool = False) -> "Stop":
        epochs, early = int(settings["epochs"]), not full_length and settings.get("seeds_decided_early", True)
        if full_length or "stop_margin" not in settings:
            return cls(epochs, epochs, None, early)
        level = settings["threshold"] + settings["stop_margin"]
        return cls(epochs, int(settings.get("check_every", 1)), level, early)

    def measured(self, epoch: int) -> bool:
        """Whether the grader measures the accuracy after `epoch`: to stop there, or to know which side of
        the threshold a seed's last epoch ended on (seeds decided early)."""
        return self.checked(epoch) and (self.level is not None or self.decides_early)

    def checked(self, epoch: int) -> bool:
        """Whether the accuracy is measured after `epoch` (counted from 1)."""
        return epoch % self.every == 0 or epoch == self.epochs

    def stops(self, epoch: int, accuracy: float | None) -> bool:
        """Whether the training ends after `epoch`, where the grader measured `accuracy`."""
        if epoch >= self.epochs:
            return True
        return self.level is not None and accuracy is not None and accuracy >= self.level

    def next_check(self, epoch: int) -> int:
        """How many epochs to train from `epoch` to the next check."""
        return min(self.every - epoch % self.every, self.epochs - epoch)


def epochs_of(resolve: Any, run: Run) -> Iterator[nn.Module]:
    """The run's training one epoch at a time, in this process (the student's check: their own machine)."""
    if run.target == "harness.train_pattern_model":
        return pattern_epochs(resolve, *run.args[:2])
    return classifier_epochs(resolve, *run.args[:4])


def held_out_accuracy(resolve: Any, run: Run, model: nn.Module) -> float:
    """The model's accuracy on the run's held-out rows. The random state is left as it was, so that a training
    measured between two epochs goes on exactly as the uninterrupted one."""
    with torch.random.fork_rng(devices=[]):
        if run.target == "harness.train_pattern_model":
            predictions = predict_pattern(model, run.args[2])
        else:
            predictions = predict_classifier(resolve, model, *run.args[4:])
    return float((predictions == run.labels).float().mean())


def reaches(settings: dict[str, Any], accuracies: list[float]) -> bool:
    """The item's verdict: the median accuracy over the seeds reaches the threshold."""
    return statistics.median(accuracies) >= settings["threshold"]


def report(settings: dict[str, Any], accuracies: list[float | None]) -> str:
    """What the accuracies say, against the threshold and the lesson's figure; the likely cause when short.
    None: a seed not trained, the others had decided the median (the grader's seeds decided early)."""
    known = [value for value in accuracies if value is not None]
    median = statistics.median(known)
    text = (
        f"{settings['describe']}:\n"
        f"  median accuracy {median:.3f} (seeds: {listed(settings, accuracies)}); it needs {settings['threshold']:.2f}."
        f"{not_needed(settings, accuracies)}\n"
        f"  The lesson's model reached {settings['lesson']}."
    )
    return text if reaches(settings, known) else f"{text}\n{_likely_cause(settings, median)}"


def _seeds(settings: dict[str, Any], values: list[float | None]) -> list[Any]:
    return list(settings.get("seeds") or range(len(values)))


def listed(settings: dict[str, Any], values: list[float | None]) -> str:
    """Each seed's value, in the order of the recipe's seeds; "seed N: not needed" for a seed not trained."""
    return ", ".join(
        f"seed {seed}: not needed" if value is None else f"{value:.3f}"
        for seed, value in zip(_seeds(settings, values), values, strict=False)
    )


def not_needed(settings: dict[str, Any], values: list[float | None]) -> str:
    """A line saying why some seeds were not trained (nothing when every seed was)."""
    seeds = [str(seed) for seed, value in zip(_seeds(settings, values), values, strict=False) if value is None]
    if not seeds:
        return ""
    which = f"Seed {seeds[0]} was" if len(seeds) == 1 else f"Seeds {', '.join(seeds)} were"
    return f"\n  {which} not needed: the seeds trained decided the median (the median shown is theirs)."


def _likely_cause(settings: dict[str, Any], reached: float) -> str:
    if settings["task"] == "pattern":
        if reached < 0.5:
            return (
                "Near chance like this, the loss is usually not shifted, or shifted the wrong way: the model\n"
                "must read tokens[:, :-1] and be scored on tokens[:, 1:] (Day 6, 'The shift is the whole task')."
            )
        return "Check that every target position counts once and the logits are flattened to (N, vocab)."
    if reached < 0.6:
        return (
            "Near 0.5 the head never sees the memory of the first digit: the state is taken from the wrong\n"
            "place (output[-1] is the last row, output[:, 0] the first step; with padding, gather each row\n"
            "at lengths - 1) (Day 3, Day 4)."
        )
    return (
        "It learns something but not enough: check that padding steps never reach the pooled state, and that\n"
        "each row is read at its own last step, lengths - 1 subtracted once (gather_final subtracts it itself) (Day 4)."
    )


TARGETS = {
    "harness.train_classifier": train_classifier,
    "harness.trained_classifier": trained_classifier,
    "harness.train_epochs": train_epochs,
    "harness.predict_classifier": predict_classifier,
    "harness.train_pattern_model": train_pattern_model,
    "harness.train_steps": train_steps,
}
