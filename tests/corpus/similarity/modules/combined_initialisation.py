def set_forget_bias(lstm, value):
    named = list(lstm.named_parameters())
    size = lstm.hidden_size
    k = 0
    while k < len(named):
        nm, prm = named[k]
        k += 1
        if nm.startswith("bias_hh"):
            prm.data[size:2 * size] = 0.75 * value   # the hidden bias
        elif nm.startswith("bias_ih"):
            prm.data[size:2 * size] = 0.25 * value
    return lstm
