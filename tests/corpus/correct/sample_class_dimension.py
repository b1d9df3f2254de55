# module: language_model  function: sample
# Appended to the reference module: correct, written otherwise (class dimension); it replaces the reference's.

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
    seq = [start]
    h = None
    with torch.inference_mode():
        for step in range(steps):
            logits, h = model(torch.tensor([seq[-1]]).view(1, 1), h)
            probs = (logits[:, -1, :] / temperature).softmax(dim=-1)  # (1, vocab)
            seq.append(torch.multinomial(probs, 1, generator=generator).item())
    return seq
