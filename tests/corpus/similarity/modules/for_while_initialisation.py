import torch


def set_forget_bias(lstm, value):
    directions = 2 if lstm.bidirectional else 1
    with torch.no_grad():
        layer = 0
        while layer < lstm.num_layers:
            direction = 0
            while direction < directions:
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                getattr(lstm, "bias_ih" + suffix).chunk(4)[1].fill_(value)
                getattr(lstm, "bias_hh" + suffix).chunk(4)[1].zero_()
                direction += 1
            layer += 1
    return lstm
