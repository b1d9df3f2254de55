"""The recipe's LSTM initialisation, the forget gate opened, done here by your own set_forget_bias.

The grader opens it with its own code (set_forget_bias's answer, which this repository does not hold), so
the classifier items need set_forget_bias done, and done right, to train here as they do in grading.
"""

from torch import nn

from exercises.initialisation import set_forget_bias


def open_forget_gate(rnn: nn.Module, value: float) -> None:
    if isinstance(rnn, nn.LSTM):
        set_forget_bias(rnn, value)
