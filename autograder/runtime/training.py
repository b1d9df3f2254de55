"""The grader's own training loops, run in the worker over the student's code.

The recipes are the lessons' (Adam, mini-batches, gradient norm clipped at 1.0,
fixed seeds); the numbers come from the rubric. Only predictions go back: the
labels of the evaluation rows never reach the worker.
"""

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .trusted import LanguageModel

EVAL_CHUNK = 1024


def _open_forget_gate(rnn: nn.Module, value: float) -> None:
    """The standard LSTM initialisation (Day 2), done here so no TODO is needed for it."""
    if isinstance(rnn, nn.LSTM):
        hidden = rnn.hidden_size
        with torch.no_grad():
            for name, parameter in rnn.named_parameters():
                if name.startswith("bias_ih"):
                    parameter[hidden : 2 * hidden] = value
                elif name.startswith("bias_hh"):
                    parameter[hidden : 2 * hidden] = 0.0


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
    torch.manual_seed(recipe["seed"])
    kind = resolve("classifier.SequenceClassifier")
    model = kind(vocab=10, embed=recipe["embed"], hidden=recipe["hidden"], cell=recipe["cell"], pooling="last")
    _open_forget_gate(model.rnn, recipe["forget_bias"])
    optimizer = torch.optim.Adam(model.parameters(), lr=recipe["learning_rate"])
    order = torch.Generator().manual_seed(recipe["seed"])
    size = recipe["batch_size"]
    model.train()
    for _ in range(recipe["epochs"]):
        permutation = torch.randperm(len(tokens), generator=order)
        for start in range(0, len(tokens), size):
            rows = permutation[start : start + size]
            optimizer.zero_grad()
            logits = model(tokens[rows], None if lengths is None else lengths[rows])
            F.cross_entropy(logits, labels[rows]).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
    model.eval()
    with torch.no_grad():
        chunks = [
            model(eval_tokens[i : i + EVAL_CHUNK], None if eval_lengths is None else eval_lengths[i : i + EVAL_CHUNK])
            for i in range(0, len(eval_tokens), EVAL_CHUNK)
        ]
    return torch.cat(chunks).argmax(dim=1)


def train_pattern_model(
    resolve: Any, recipe: dict[str, Any], tokens: torch.Tensor, eval_inputs: torch.Tensor
) -> torch.Tensor:
    """Train the grader's LSTM language model with the student's next_token_loss; predict each next token."""
    torch.manual_seed(recipe["seed"])
    loss_of = resolve("language_model.next_token_loss")
    model = LanguageModel(recipe["vocab"], recipe["embed"], recipe["hidden"])
    optimizer = torch.optim.Adam(model.parameters(), lr=recipe["learning_rate"])
    model.train()
    for _ in range(recipe["epochs"]):
        optimizer.zero_grad()
        loss = loss_of(model, tokens)
        if type(loss) is not torch.Tensor or loss.dim() != 0 or not loss.requires_grad:
            raise TypeError("next_token_loss must return a scalar tensor that carries gradients")
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    model.eval()
    with torch.no_grad():
        logits, _ = model(eval_inputs)
    return logits.argmax(dim=-1)


def train_steps(
    resolve: Any,
    model: nn.Module,
    batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
    optimizer: torch.optim.Optimizer,
    clip: tuple[float | None, ...],
    stale: float | None,
) -> list[Any]:
    """The student's train_step called once per batch on the same model and optimizer, as a training loop does.

    `stale` fills every gradient before the first step (what an earlier backward left); `clip` is
    () for train_step's own default, else (clip,). Returns what each call returned.
    """
    train_step = resolve("classifier.train_step")
    if stale is not None:
        for parameter in model.parameters():
            parameter.grad = torch.full_like(parameter, stale)
    return [train_step(model, batch, optimizer, *clip) for batch in batches]


TARGETS = {
    "harness.train_classifier": train_classifier,
    "harness.train_pattern_model": train_pattern_model,
    "harness.train_steps": train_steps,
}
