"""The misconception catalogue: each known mistake once, with the lesson to reread.

The ids are those of the course's catalogue (shared/misconceptions.md). A check
that recognises a mistake leads its feedback with `Mistake.feedback`:
`[G1] <what the output shows and what to do> (<lesson>).`
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    id: str
    function: str
    explanation: str  # one sentence: what the output shows, and the fix
    lesson: str

    @property
    def feedback(self) -> str:
        return f"[{self.id}] {self.explanation}.\n  Reread: {self.lesson}."


_DAY1_LOOP = 'Day 1, "The recurrence, written out"'
_DAY4_PACK = 'Day 4, "Packing is not an optimisation"'

MISTAKES = [
    Mistake(
        "R1",
        "rnn_forward",
        "Your loop multiplies by weight_ih and weight_hh untransposed: PyTorch stores them "
        "(hidden, input), so use x @ weight_ih.T and h @ weight_hh.T",
        'demos, "PyTorch stores the input-to-hidden weights transposed"',
    ),
    Mistake(
        "R2",
        "rnn_forward",
        "Your state is not carried: every step starts again from h0 (or zeros). Feed the "
        "state of step t - 1 into step t",
        _DAY1_LOOP,
    ),
    Mistake(
        "R3",
        "rnn_forward",
        "One of the two biases is missing: PyTorch adds both bias_ih and bias_hh at every step",
        'demos, "PyTorch keeps TWO biases"',
    ),
    Mistake(
        "R4",
        "rnn_forward",
        "Your loop walks over the batch axis instead of time: with batch_first, x[:, t] is step t of every row",
        'Day 1, "batch_first is not the default"',
    ),
    Mistake(
        "R5",
        "rnn_forward",
        "Your h_n is the state after the first step; it must be the state after the last",
        'Day 1, "PyTorch does the loop for you"',
    ),
    Mistake(
        "L1",
        "lstm_step",
        "Your gates are split in the paper's order (i, f, o, g); PyTorch's blocks are input, forget, cell (g), output",
        'Day 2 and the demos, "PyTorch stacks the four gate biases"',
    ),
    Mistake(
        "L2",
        "lstm_step",
        "Your cell update lost its addition: c_new = f * c + i * g, the old cell gated and the candidate added",
        'Day 2, "What LSTM changed"',
    ),
    Mistake(
        "P1",
        "encode_packed",
        "Your final states are the states after the padding: the layer ran over the padded "
        "rectangle. Pack the batch with pack_padded_sequence before running the layer",
        _DAY4_PACK,
    ),
    Mistake(
        "P2",
        "encode_packed",
        "Your rows come back in sorted-by-length order, not in the batch's order: let "
        "enforce_sorted=False sort and unsort for you",
        _DAY4_PACK,
    ),
    Mistake(
        "P3",
        "encode_packed",
        "Time and batch are confused: pack and unpack with batch_first=True",
        'Day 1 "batch_first is not the default", Day 4',
    ),
    Mistake(
        "G1",
        "gather_final",
        "Your final states equal output[:, -1]: for rows shorter than the batch that is the "
        "state after the padding. Gather at lengths - 1",
        _DAY4_PACK,
    ),
    Mistake(
        "G2",
        "gather_final",
        "Off by one: you read index lengths, one step past each row's last real step; "
        "the last real step is at lengths - 1",
        'Day 4, "gather the output at each real last position"',
    ),
    Mistake(
        "G3",
        "masked_mean",
        "Your mean divides by the padded length, so the padding drags short rows: sum the "
        "real steps and divide by each row's own length",
        'Day 4, "divide by the true length"',
    ),
    Mistake(
        "F1",
        "set_forget_bias",
        "The value went into the wrong quarter of the bias: PyTorch's gate order is "
        "input, forget, cell, output, so the forget block is [H:2H]",
        'demos, "PyTorch stacks the four gate biases as (input, forget, cell, output)"',
    ),
    Mistake(
        "F2",
        "set_forget_bias",
        "Both bias_ih and bias_hh got the value, so the gate sees twice as much: set "
        "bias_ih's block to the value and bias_hh's to 0",
        'demos, "PyTorch keeps TWO biases"',
    ),
    Mistake(
        "F3",
        "set_forget_bias",
        "Only some layers or directions were changed: a stacked or bidirectional LSTM "
        "has bias_ih_lK and bias_hh_lK (and _reverse) for every layer K",
        "Day 4, Day 5",
    ),
    Mistake(
        "F4",
        "set_forget_bias",
        "The bias Parameters were replaced by new tensors, so an optimizer built earlier "
        "no longer updates them: write into the existing ones under torch.no_grad()",
        "Day 2",
    ),
    Mistake(
        "S1",
        "next_token_loss",
        "There is no shift: each position is scored against its own input token. Feed "
        "tokens[:, :-1] and score against tokens[:, 1:]",
        'Day 6, "The shift is the whole task"',
    ),
    Mistake(
        "S2",
        "next_token_loss",
        "The shift goes the wrong way: your model is asked for the previous token, not the next one",
        'Day 6, "The shift is the whole task"',
    ),
    Mistake(
        "S3",
        "next_token_loss",
        "The flattening scrambles positions: reshape the logits to (-1, vocab) and the "
        "targets to (-1,) so row k of one matches entry k of the other",
        'Day 6, "CrossEntropyLoss wants (N, classes)"',
    ),
    Mistake(
        "S4",
        "next_token_loss",
        "Padding targets are counted in your mean: leave out the positions whose target "
        "is pad_id (ignore_index does it)",
        "Day 4 and Day 6",
    ),
    Mistake(
        "T1",
        "sample",
        "Your temperature multiplies the logits; it divides them (below 1 sharpens, above 1 flattens)",
        'Day 6, "Generating from it"',
    ),
    Mistake(
        "T2",
        "sample",
        "The recurrent state is not carried: each step starts the model afresh. Pass back the state it returned",
        'Day 6, "Generating from it"',
    ),
    Mistake(
        "T3",
        "sample",
        "You take the argmax; draw with torch.multinomial(probs, 1, generator=generator)",
        'Day 6, "Generating from it"',
    ),
    Mistake(
        "C1",
        "SequenceClassifier",
        "Batch and time are confused: with batch_first the states are (batch, "
        "length, hidden), so the last step is output[:, -1], not output[-1]",
        'Day 1, "batch_first is not the default"; checklist item 1',
    ),
    Mistake(
        "C2",
        "SequenceClassifier",
        "On a padded batch your last-state pooling reads the state after the padding: "
        "take each row's state at lengths - 1",
        "Day 3, Day 4",
    ),
    Mistake(
        "C3",
        "SequenceClassifier",
        "Your mean pooling averages over the padding too: average each row's real steps only",
        'Day 4, "divide by the true length"',
    ),
    Mistake(
        "K1",
        "train_step",
        "Your clipping comes after optimizer.step(), so the step used the unclipped gradient: "
        "clip between backward() and step()",
        'Day 5, "Exploding gradients"',
    ),
    Mistake(
        "K2",
        "train_step",
        "You clip each gradient entry (clip_grad_value_), which changes the step's direction; "
        "clip the total norm with clip_grad_norm_",
        'Day 5, "Exploding gradients"',
    ),
    Mistake(
        "B1",
        "bag_of_counts",
        "Your counts include the padding token 0 or miss digit 9: count the digits 1 to 9, one column each",
        'Day 1, "A task that needs memory"',
    ),
]

CATALOGUE: dict[str, Mistake] = {mistake.id: mistake for mistake in MISTAKES}
