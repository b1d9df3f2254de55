# module: initialisation  function: set_forget_bias  loses: legal_inputs
# Appended to the reference module: a "production" student validates the value, and refuses 0 and below.

import torch
from torch import nn


def set_forget_bias(lstm: nn.LSTM, value: float = 1.0) -> nn.LSTM:
    """Give the forget gate an effective bias of `value`, in place, everywhere."""
    if not isinstance(lstm, nn.LSTM):
        raise TypeError(f"expected an nn.LSTM, got {type(lstm).__name__}")
    if value <= 0:
        raise ValueError(f"the forget bias must be positive to keep the gate open, got {value}")
    hidden = lstm.hidden_size
    with torch.no_grad():
        for name, parameter in lstm.named_parameters():
            if name.startswith("bias_ih"):
                parameter[hidden : 2 * hidden] = value
            elif name.startswith("bias_hh"):
                parameter[hidden : 2 * hidden] = 0.0
    return lstm
