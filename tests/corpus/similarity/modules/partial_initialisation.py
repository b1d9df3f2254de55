import torch


def set_forget_bias(lstm, value):
    h = lstm.hidden_size
    gate = slice(h, 2 * h)
    for pname in dict(lstm.named_parameters()):
        if not pname.startswith("bias"):
            continue
        vec = getattr(lstm, pname)
        with torch.no_grad():
            vec[gate] = value if pname.startswith("bias_ih") else 0.0
    return lstm
