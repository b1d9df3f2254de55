# module: language_model  function: sample
# Appended to the reference module: correct, written otherwise (manual mask); it replaces the reference's.

import torch
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
    generated = [start]
    hidden = None
    with torch.no_grad():
        for _ in range(steps):
            inp = torch.tensor([[generated[-1]]], dtype=torch.long)
            logits, hidden = model(inp, hidden)
            scaled = logits[0, -1] / temperature
            e = torch.exp(scaled - scaled.max())  # softmax by hand
            probs = e / e.sum()
            nxt = torch.multinomial(probs, num_samples=1, generator=generator)
            generated.append(nxt.item())
    return generated
