import torch


def set_forget_bias(lstm, value):
    size = lstm.hidden_size
    forget = slice(size, 2 * size)
    for parameter_name in dict(lstm.named_parameters()):
        if not parameter_name.startswith("bias"):
            continue
        bias = getattr(lstm, parameter_name)
        with torch.no_grad():
            bias[forget] = value if parameter_name.startswith("bias_ih") else 0.0
    return lstm
