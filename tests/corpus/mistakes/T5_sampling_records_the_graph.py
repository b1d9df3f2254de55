# module: language_model  function: sample  mistake: T5
# Appended to the reference module: what the student wrote differently replaces its own.

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
    seeded generator gives the same list. Leave the model's mode alone: it has no
    dropout, so model.eval() is not needed (torch.no_grad() is).

    Lesson: Day 6, "Generating from it".
    Traps: temperature divides the logits (below 1 sharpens, above 1 flattens);
    forgetting to pass the state back in makes every step start from nothing;
    argmax is not a sample.
    """
    # TODO 8 · sampling: loop `steps` times: run the model on the last token with
    # the carried state, scale the logits by 1 / temperature, softmax, draw a token.
    generated = [start]
    hidden = None
    for _ in range(steps):
        x = torch.tensor([[generated[-1]]])
        logits, hidden = model(x, hidden)
        probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
        next_token = torch.multinomial(probs, num_samples=1, generator=generator)
        generated.append(next_token.item())
    return generated
