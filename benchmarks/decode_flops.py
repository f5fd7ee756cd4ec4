"""The matrix products' FLOPs of a decoding run, counted from the rows its model steps computed.

`CountingModel(model)` wraps a zoo model (or any object with `encode` and `step`) and adds
up, in int64 variables, what each call computed: the source positions the encoder read
(padding included: it runs over the padded batch) and the sentences, and per `step` call
its rows (hypotheses: B x K, the first beam step's single row per sentence, finished
sentences not yet dropped from the batch), the logit columns of each row (a shortlist's M,
else the vocabulary) and the source positions each row attends over. `matmul_flops(config,
counts)` turns them into the FLOPs of the products, with `zoo.models.flops.forward_flops`:
that count is bilinear in the source and target lengths, `a S + b T + c S T + d` per term,
so an encoded sentence costs `a S + d`, a row-step `b + c S` (the output projection's `b`
scaled by the columns over the vocabulary).

`benchmarks/decode.py --flops` runs every search once more over its batches through the
counting model (untimed) and divides the FLOPs by the search's timed seconds and by the
machine's matmul peak measured in the same process (`benchmarks/matmul_peak.py`). Beam
search's FLOPs at that peak, over greedy's measured time, is the cost no implementation of
the same search can go under on the machine while its products run no faster than the peak
(a batch's own shapes may run products a little faster than the 2048 x 2048 of the peak).
"""

import tensorflow as tf

from zoo.models.flops import forward_flops

COUNTS = ("encoded_positions", "sentences", "row_steps", "row_columns", "row_sources")  # the counters, in order


class CountingModel:
    """`model` with its calls counted (the module docstring); every other attribute is the model's own."""

    def __init__(self, model):
        self.model = model
        self.counts = tf.Variable(tf.zeros([len(COUNTS)], tf.int64), trainable=False, name="decode_counts")

    def __getattr__(self, name):  # restrict_output, step_kernels, ...: only where the model has them
        return getattr(self.model, name)

    def reset(self):
        self.counts.assign(tf.zeros([len(COUNTS)], tf.int64))

    def encode(self, source_ids):
        shape = tf.cast(tf.shape(source_ids), tf.int64)
        self.counts.assign_add(tf.stack([shape[0] * shape[1], shape[0], 0, 0, 0]))
        return self.model.encode(source_ids)

    def step(self, token_ids, state, memory, **kwargs):
        logits, state, attention = self.model.step(token_ids, state, memory, **kwargs)
        rows = tf.cast(tf.size(token_ids), tf.int64)
        columns, sources = (tf.cast(tf.shape(logits)[-1], tf.int64), tf.cast(tf.shape(attention)[-1], tf.int64))
        self.counts.assign_add(tf.stack([tf.constant(0, tf.int64), 0, rows, rows * columns, rows * sources]))
        return logits, state, attention

    def read(self):
        """The counts so far: `{name: count}` for each name of `COUNTS`."""
        return dict(zip(COUNTS, (int(value) for value in self.counts.numpy())))


def bilinear(config):
    """`{term: (a, b, c, d)}`: each term of `forward_flops` as `a S + b T + c S T + d`."""
    f00, f10, f01, f11 = (forward_flops(config, s, t) for s, t in ((0, 0), (1, 0), (0, 1), (1, 1)))
    return {term: (f10[term] - d, f01[term] - d, f11[term] - f10[term] - f01[term] + d, d)
            for term, d in f00.items()}


def matmul_flops(config, counts):
    """The products' FLOPs of the counted calls (`CountingModel.read()`) of a model with `config`."""
    vocabulary = config["target_vocab_size"]
    total = 0.0
    for term, (a, b, c, d) in bilinear(config).items():
        per_row = b * counts["row_columns"] / vocabulary if term == "output_projection" else b * counts["row_steps"]
        total += a * counts["encoded_positions"] + d * counts["sentences"] + per_row + c * counts["row_sources"]
    return total
