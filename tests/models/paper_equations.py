"""Numpy pieces of the papers' equations shared by the model reference tests (no zoo code)."""

import numpy as np

SOURCE_VOCAB, TARGET_VOCAB, EMBEDDING, ENCODER, DECODER = 11, 13, 4, 3, 5
SOURCE = np.array([[5, 6, 7, 8], [9, 4, 0, 0]], "int32")  # the second sentence is padded
TARGET_IN = np.array([[1, 5, 6], [1, 7, 0]], "int32")


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm(x, h, c, kernel, recurrent_kernel, bias):
    """One LSTM step, gates in Keras' order i, f, g, o."""
    i, f, g, o = np.split(x @ kernel + h @ recurrent_kernel + bias, 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c), c


def weights(model):
    prefix = model.name + "/"
    return {w.path.removeprefix(prefix): np.asarray(w.numpy(), "float64") for w in model.weights}


def encode(w, tokens):
    """One sentence's real tokens -> (h_j = [fwd_j; bwd_j] (S, 2U), final forward h, final backward h)."""
    embedded = w["source_embedding/embeddings"][tokens]
    outputs = {}
    for direction, order in (("forward", range(len(tokens))), ("backward", reversed(range(len(tokens))))):
        h, c = np.zeros(ENCODER), np.zeros(ENCODER)
        states = {}
        for j in order:
            h, c = lstm(embedded[j], h, c, w[f"encoder/{direction}_0/kernel"],
                        w[f"encoder/{direction}_0/recurrent_kernel"], w[f"encoder/{direction}_0/bias"])
            states[j] = h
        outputs[direction] = (np.stack([states[j] for j in range(len(tokens))]), h)
    (forward, final_forward), (backward, final_backward) = outputs["forward"], outputs["backward"]
    return np.concatenate([forward, backward], axis=-1), final_forward, final_backward


def softmax(scores):
    a = np.exp(scores - scores.max())
    return a / a.sum()


def maxout(x, pool=2):
    """Max over consecutive groups of `pool` (Goodfellow et al., 2013)."""
    return x.reshape(x.shape[:-1] + (x.shape[-1] // pool, pool)).max(-1)


def randomize(model, scale=0.5, seed=0):
    """Gives every weight N(0, scale^2) values: large enough that attention is far from uniform."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0.0, scale, variable.shape).astype(variable.dtype))
    return model
