# module: language_model  function: sample
# Appended to the reference module: correct, written otherwise (boolean select); it replaces the reference's.

import torch
import torch.nn.functional as F
from torch import nn


def sample(model: nn.Module, start: int, steps: int, temperature: float, generator: torch.Generator) -> list[int]:
    """Generate `steps` tokens after `start`, one at a time, carrying the state.

    Each step feeds the last token, shape (1, 1), together with the state the model
    returned on the previous step (None on the first), takes the logits of that
    position, divides them by `temperature`, applies softmax and draws one token
    with `torch.multinomial(probs, 1, generator=generator)`. Runs under
    `torch.no_grad()`.

    Returns [start, t1, ..., t_steps]: a list of `steps + 1` Python ints. The same
    seeded generator gives the same list.

    Lesson: Day 6, "Generating from it".
    Traps: temperature divides the logits (below 1 sharpens, above 1 flattens);
    forgetting to pass the state back in makes every step start from nothing;
    argmax is not a sample.
    """
    # TODO 8 · sampling: loop `steps` times: run the model on the last token with
    # the carried state, scale the logits by 1 / temperature, softmax, draw a token.
    model.eval()
    device = next(model.parameters()).device
    out = [start]
    state = None
    for _ in range(steps):
        with torch.no_grad():
            scores, state = model(torch.full((1, 1), out[-1], device=device), state)
        probs = F.softmax(scores.squeeze() / temperature, dim=0)
        out.append(int(torch.multinomial(probs, 1, generator=generator)[0]))
    return out
