"""The misconception catalogue: each known mistake once, with the lesson to reread.

The ids are those of the course's catalogue (shared/misconceptions.md). A check
that recognises a mistake leads its feedback with `feedback(key)`:
`[G1] <what the output shows and what to do>.\n  Reread: <lesson>.` A key is an id,
an id and a form after ':' ("R1:hh") where one form of a mistake needs its own words, or
such parts joined by '+' ("C3+C4", "K3+S5", "R1:hh+R6") for two mistakes made at once, each
then named on its own line.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Form:
    """A form of a mistake that is explained in its own words."""

    explanation: str
    lesson: str


@dataclass(frozen=True)
class Mistake:
    id: str
    function: str
    explanation: str  # one sentence: what the output shows, and the fix
    lesson: str
    forms: dict[str, Form] = field(default_factory=dict)  # "hh" -> its own words, for "R1:hh"
    also: tuple[str, ...] = ()  # further functions where the same mistake is made (S5: train_step)

    @property
    def functions(self) -> tuple[str, ...]:
        return (self.function, *self.also)

    @property
    def feedback(self) -> str:
        return _text(self.id, self.explanation, self.lesson)

    def feedback_for(self, form: str) -> str:
        """The feedback for one form ("hh" of "R1:hh"); the mistake's own for any other."""
        own = self.forms.get(form)
        return self.feedback if own is None else _text(self.id, own.explanation, own.lesson)


def _text(mistake: str, explanation: str, lesson: str) -> str:
    return f"[{mistake}] {explanation}.\n  Reread: {lesson}."


_DAY1_LOOP = 'Day 1, "The recurrence, written out"'
_DAY4_PACK = 'Day 4, "Packing is not an optimisation"'
_DEMO_TRANSPOSED = 'the demos, "PyTorch stores the input-to-hidden weights TRANSPOSED"'
_DEMO_TWO_BIASES = 'the demos, "biases, one for the input term and one for the hidden term"'
_TRAINING_LOOP = 'Day 5, "Exploding gradients, and the one-line fix"'
_DAY4_GATHER = 'Day 4, "gather the output at each sequence\'s real last position"'
_NUMPY_DRAWS = Form(  # T4 from NumPy seeded with the generator's seed, in either of NumPy's APIs
    "Your draws come from NumPy seeded with the generator's seed: the list repeats, but its tokens are "
    "not the generator's draws. Draw each with torch.multinomial(probs, 1, generator=generator)",
    'Day 6, "Generating from it"',
)

MISTAKES = [
    Mistake(
        "R1",
        "rnn_forward",
        "Your loop multiplies by weight_ih and weight_hh untransposed: PyTorch stores them "
        "(hidden, input) and (hidden, hidden), so use x @ weight_ih.T and h @ weight_hh.T",
        _DEMO_TRANSPOSED,
        forms={
            "ih": Form(
                "Your loop multiplies x by weight_ih untransposed: PyTorch stores it (hidden, input), "
                "so use x @ weight_ih.T",
                _DEMO_TRANSPOSED,
            ),
            "hh": Form(
                "Your loop multiplies the state by weight_hh untransposed: being square it raises no "
                "shape error, but each step needs h @ weight_hh.T (weight_ih is right)",
                'the demos\' loop by hand, "h = np.tanh(W_ih @ x + b_ih + W_hh @ h + b_hh)", is for one '
                "column vector h; a batch holds one state per row, so W_hh @ h becomes h @ W_hh.T",
            ),
        },
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
        _DEMO_TWO_BIASES,
    ),
    Mistake(
        "R4",
        "rnn_forward",
        "Your loop walks over the batch axis instead of time: its h_n holds one state per time step, not per row. "
        "With batch_first, x[:, t] is step t of every row",
        'Day 1, "batch_first is not the default"',
        forms={
            "steps": Form(
                "Your loop reads its number of steps from the batch axis (x.size(0)): with batch_first that is the "
                "number of rows, so it runs too few steps or past the last one. The length is x.shape[1]",
                'Day 1, "batch_first is not the default"',
            ),
        },
    ),
    Mistake(
        "R5",
        "rnn_forward",
        "Your h_n is the state after the first step; it must be the state after the last",
        'Day 1, "PyTorch does the loop for you"',
    ),
    Mistake(
        "R6",
        "rnn_forward",
        "Your loop ignores h0: it starts from zeros whatever initial state it is given. Start from "
        "h0[0] when h0 is given, and from zeros only when it is None",
        _DAY1_LOOP,
    ),
    Mistake(
        "R7",
        "rnn_forward",
        "Your output stacks the steps on dim 0, so it is (length, batch, hidden); with batch_first it is "
        "(batch, length, hidden): stack the states on dim 1",
        'Day 1, "batch_first is not the default"',
    ),
    Mistake(
        "R8",
        "rnn_forward",
        "Your zero state is made as float32 whatever the input (torch.zeros(batch, hidden)): a float64 input (or "
        "one on a GPU) breaks or is cast down. Make it from the input: x.new_zeros(batch, hidden)",
        _DAY1_LOOP,
        forms={
            "numpy": Form(
                "Your zero state is made in NumPy (np.zeros), whose numbers are float64 whatever the input: a float32 "
                "input breaks on it. Make it from the input in PyTorch: x.new_zeros(batch, hidden)",
                _DAY1_LOOP,
            ),
            "mask": Form(
                "Your mask is made in NumPy, whose floats are float64, so a float32 output's mean comes back "
                "float64: build it in PyTorch (torch.arange(T) < lengths[:, None]) or cast it, .to(output.dtype)",
                "the function's docstring: it returns (batch, hidden), of output's dtype",
            ),
        },
        also=("masked_mean",),  # a NumPy mask (R8:mask)
    ),
    Mistake(
        "L1",
        "lstm_step",
        "Your gates are split in the paper's order (i, f, o, g); PyTorch's blocks are input, forget, cell (g), output",
        'Day 2 and the demos, "PyTorch stacks the four gate biases"',
        forms={
            "tensorflow": Form(
                "Your gates are split in TensorFlow's order (i, g, f, o); PyTorch's blocks are input, forget, "
                "cell (g), output",
                'Day 2 and the demos, "PyTorch stacks the four gate biases"',
            ),
        },
    ),
    Mistake(
        "L2",
        "lstm_step",
        "Your cell update lost its addition: c_new = f * c + i * g, the old cell gated and the candidate added",
        'Day 2, "What LSTM changed"',
    ),
    Mistake(
        "L3",
        "lstm_step",
        "Your step changes the caller's tensors in place (c.mul_(f), c *= f, c[...] = ...): the state it was "
        "given is no longer what the caller passed. Build new tensors: c_new = f * c + i * g",
        'Day 2, "What LSTM changed"',
        forms={
            "inputs": Form(
                "Your function changes the caller's tensors in place (x.masked_fill_(...), h.copy_(...)): they no "
                "longer hold what was passed. Build new tensors (masked_fill, not masked_fill_; never write in h0)",
                "the function's docstring: it returns new tensors and leaves its arguments as they were given",
            ),
        },
        also=(
            "rnn_forward",
            "gather_final",
            "masked_mean",
            "next_token_loss",
            "SequenceClassifier",
        ),  # the contract of every function that returns new tensors
    ),
    Mistake(
        "L4",
        "lstm_step",
        "Your step unpacks c, h = state, but the state is (h, c): your old cell is the hidden state and your hidden "
        "state the old cell. Unpack h, c = state, the order an LSTM returns them in",
        'Day 2, "What LSTM changed": "output, (h, c) = lstm(x)"',
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
        forms={
            "enforce_sorted": Form(
                "Your packing leaves pack_padded_sequence's default enforce_sorted=True on, so PyTorch raises on a "
                "batch whose lengths are not sorted: pass enforce_sorted=False (it sorts and unsorts for you)",
                _DAY4_PACK,
            ),
        },
    ),
    Mistake(
        "P3",
        "encode_packed",
        "Time and batch are confused: pack and unpack with batch_first=True",
        'Day 1 "batch_first is not the default", Day 4',
    ),
    Mistake(
        "P4",
        "encode_packed",
        "Your h_n is the unpacked output's last step (output[:, -1]; output[-1] is the last row): "
        "padding, zeros, for every short row. Take h_n from the state the layer returns for the packed "
        "batch",
        _DAY4_PACK,
    ),
    Mistake(
        "P5",
        "encode_packed",
        "Your output stops at the longest row: pad_packed_sequence pads only that far unless told. Pass "
        "total_length=embedded.shape[1] so the output keeps the batch's padded length",
        _DAY4_PACK,
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
        _DAY4_GATHER,
    ),
    Mistake(
        "G5",
        "gather_final",
        "Your .squeeze() has no dimension, so a batch of one row (or a hidden size of 1) loses an axis: "
        "squeeze only the gathered step's axis, .squeeze(1)",
        'Day 4, "last = out.gather(1, idx).squeeze(1)"',
        forms={
            "h_n": Form(
                "Your h_n.squeeze() has no dimension, so a batch of one row (or a hidden size of 1) loses its axis "
                "too: take the last layer's state, h_n[-1], or squeeze the layer's axis alone, .squeeze(0)",
                _DAY4_PACK,
            ),
        },
        also=("encode_packed",),  # h_n.squeeze() on the layer's state (G5:h_n)
    ),
    Mistake(
        "G3",
        "masked_mean",
        "Your mean divides by the padded length, so the padding drags short rows: sum the "
        "real steps and divide by each row's own length",
        'Day 4, "divide by the true length"',
    ),
    Mistake(
        "G4",
        "masked_mean",
        "Your sum runs over the padding: it divides by each row's true length but adds the padded "
        "steps' values (right only when they are zeros). Leave the steps after each row's length out of "
        "the sum",
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
        _DEMO_TWO_BIASES,
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
        "F5",
        "set_forget_bias",
        "Only one of the two biases got its forget block written: the gate sees bias_ih + bias_hh, so "
        "the other's random values add noise. Write the value into bias_ih's block and 0 into bias_hh's",
        _DEMO_TWO_BIASES,
        forms={
            "zeroed": Form(
                "The other gates' biases were zeroed along the way: only the forget block [H:2H] should "
                "change, the input, cell and output blocks keep the values they had",
                'the demos, "PyTorch stacks the four gate biases as (input, forget, cell, output)"',
            )
        },
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
        forms={
            "inputs": Form(
                "Your padding mask is taken from the inputs, not the targets: the position whose target is the "
                "first pad still counts. Leave out the positions whose TARGET is pad_id (ignore_index does it)",
                "Day 4 and Day 6",
            ),
        },
    ),
    Mistake(
        "S5",
        "next_token_loss",
        "Your loss applies softmax before cross_entropy, which applies its own: it scores probabilities "
        "as logits, so the loss is wrong and its gradients shrink. Hand it the model's raw logits",
        "Day 6, the lesson's loss takes the logits as the model gives them: \"loss_fn(logits.reshape(-1, 6), "
        'data[:, 1:].reshape(-1))"',
        forms={
            "nll": Form(
                "Your loss feeds probabilities to nll_loss, which expects log-probabilities: it gives minus the "
                "mean probability. Hand the raw logits to cross_entropy (or log_softmax's output to nll_loss)",
                "Day 6, the lesson's loss takes the logits as the model gives them: \"loss_fn(logits.reshape(-1, "
                '6), data[:, 1:].reshape(-1))"',
            ),
            "step": Form(
                "Your train_step applies softmax before cross_entropy, which applies its own: the loss of "
                "probabilities, with gradients that shrink. Hand model(tokens, lengths) straight to "
                "cross_entropy",
                "Day 5, the lesson's step scores the model's output as it is: \"loss_fn(model(xb), yb).backward()\"",
            ),
        },
        also=("train_step",),
    ),
    Mistake(
        "S6",
        "next_token_loss",
        "Your loss is built from Python numbers (.item(), float(), NumPy) made a tensor again: it has no "
        "graph, so backward fails or trains nothing. Keep it a tensor computed from the logits",
        "Day 6, the lesson's loss takes the logits as the model gives them: \"loss_fn(logits.reshape(-1, 6), "
        'data[:, 1:].reshape(-1))"',
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
        "T4",
        "sample",
        "Your draws come from the global random state, not from the generator given, so the same seeded "
        "generator does not give the same tokens: pass generator=generator to torch.multinomial",
        'Day 6, "Generating from it"',
        forms={"numpy": _NUMPY_DRAWS, "numpy_legacy": _NUMPY_DRAWS},  # default_rng(seed), np.random.seed(seed)
    ),
    Mistake(
        "T5",
        "sample",
        "Your sampling runs the model with autograd on: every generated step keeps the graph, so memory grows "
        "with the length. Wrap the loop in `with torch.no_grad():`",
        'Day 6, "Generating from it"',
    ),
    Mistake(
        "C1",
        "SequenceClassifier",
        "Batch and time are confused: with batch_first the states are (batch, "
        "length, hidden), so the last step is output[:, -1], not output[-1]",
        'Day 1, "batch_first is not the default"; checklist item 1',
        forms={
            "pooled": Form(
                "Batch and time are confused: with batch_first the states are (batch, length, hidden), so "
                "mean and max pool over time with dim=1 (output.mean(dim=1), output.amax(dim=1)), not dim=0",
                'Day 1, "batch_first is not the default"; checklist item 1',
            )
        },
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
        "C4",
        "SequenceClassifier",
        "Your max pooling lets the padding compete: take the maximum over each row's real steps only, "
        "with the padding at -inf (a padding of 0 still beats negative values)",
        'Day 4, "Sequences of different lengths"',
    ),
    Mistake(
        "C5",
        "SequenceClassifier",
        "You subtract one twice: gather_final reads index lengths - 1 itself, so handing it lengths - 1 "
        "pools one step early (and asks a row of length 1 for index -1). Hand it lengths as they are",
        _DAY4_GATHER,
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
        "K3",
        "train_step",
        "Your gradients are never zeroed, so each step adds the gradients of earlier steps to its own: "
        "call optimizer.zero_grad() before backward()",
        _TRAINING_LOOP,
    ),
    Mistake(
        "K4",
        "train_step",
        "You return what clip_grad_norm_ returns, the norm before clipping: report the norm of the step "
        "actually taken, measured from the gradients after clipping",
        'Day 5, "measured AFTER clipping, so this is the step actually taken"',
    ),
    Mistake(
        "B1",
        "bag_of_counts",
        "Your counts include the padding token 0 or miss digit 9: count the digits 1 to 9, one column each",
        'Day 1, "A task that needs memory"',
    ),
    Mistake(
        "B2",
        "bag_of_counts",
        "Your table is sized by the batch's largest token (max() + 1, or one_hot without num_classes), "
        "so a batch without a 9 gets fewer columns: count the digits 1 to 9, nine columns always",
        'Day 1, "A task that needs memory"',
    ),
    Mistake(
        "B3",
        "bag_of_counts",
        "Your counts are integers (a sum of comparisons, or bincount, left as int64) where the features are "
        "floats: turn them into floats (.float() or .astype(np.float32))",
        'Day 1, "A task that needs memory"',
    ),
]

CATALOGUE: dict[str, Mistake] = {mistake.id: mistake for mistake in MISTAKES}


def ids(key: str) -> list[str]:
    """The catalogue ids a variant key names: "G1", "R1:hh" (a form of R1), "C3+C4" or "R1:hh+R6" (two at once)."""
    return [part.partition(":")[0] for part in key.split("+")]


def feedback(key: str) -> str:
    """The feedback that names the mistake(s) of a variant key, each with its lesson (and its form's words)."""
    parts = [part.partition(":") for part in key.split("+")]
    return "\n".join(CATALOGUE[mistake].feedback_for(form) for mistake, _, form in parts)
