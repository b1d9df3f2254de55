"""The recipe's LSTM initialisation: the forget gate opened (Day 2), by the grader's own code.

It is set_forget_bias's answer, so it stays out of the student repository: there, `python -m
exercises.check_training` opens the gate with the student's own `set_forget_bias` instead.
"""

import torch
from torch import nn


def open_forget_gate(rnn: nn.Module, value: float) -> None:
    """Every layer's forget block gets the effective bias `value` (bias_ih = value, bias_hh = 0); LSTMs only."""
    if isinstance(rnn, nn.LSTM):
        hidden = rnn.hidden_size
        with torch.no_grad():
            for name, parameter in rnn.named_parameters():
                if name.startswith("bias_ih"):
                    parameter[hidden : 2 * hidden] = value
                elif name.startswith("bias_hh"):
                    parameter[hidden : 2 * hidden] = 0.0
