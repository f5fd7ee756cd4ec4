"""A tiny deterministic attention model and an exhaustive search, shared by the decoding tests.

`ToyModel` implements the zoo model interface (docs/interfaces.md) with fixed
random tables: an RNN-like state that changes every step, dot-product attention
over a masked source memory, and a vocabulary of 6 tokens, so that the best
sequence depends on the source, the previous tokens and the step, and the whole
search space is small enough to enumerate.
"""

import numpy as np
import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID

ALLOWED_TOKENS = tuple(v for v in range(6) if v not in (PAD_ID, BOS_ID))


class ToyModel:
    """`encode` / `step` / teacher-forced `__call__` over random tables.

    Args:
        vocab_size: V, target (and source) vocabulary size.
        units: D, state and memory size.
        seed: the tables' random seed.
        sharpness: logit scale: larger makes the distributions peakier.
        end_bias: added to the end token's logit (-1e4: the end token never wins).
    """

    def __init__(self, vocab_size=6, units=8, seed=0, sharpness=2.0, end_bias=0.0):
        rng = np.random.RandomState(seed)

        def table(*shape, scale=1.0):
            return tf.constant(rng.normal(scale=scale, size=shape).astype(np.float32))

        self.vocab_size = vocab_size
        self.source_embedding = table(vocab_size, units)
        self.target_embedding = table(vocab_size, units)
        self.key_projection = table(units, units, scale=units**-0.5)
        self.input_weights = table(units, units, scale=units**-0.5)
        self.state_weights = table(units, units, scale=units**-0.5)
        self.combine_weights = table(2 * units, units, scale=(2 * units) ** -0.5)
        self.output_weights = table(units, vocab_size, scale=sharpness)
        self.output_bias = tf.constant(
            np.eye(vocab_size, dtype=np.float32)[EOS_ID] * end_bias + rng.normal(size=vocab_size).astype(np.float32)
        )

    def encode(self, source_ids):
        """`(B, S)` -> memory `{"values", "keys": (B, S, D), "mask": (B, S)}`, state `{"h": (B, D)}`."""
        mask = tf.not_equal(source_ids, PAD_ID)
        values = tf.tanh(tf.gather(self.source_embedding, source_ids))
        keys = tf.einsum("bsd,de->bse", values, self.key_projection)
        weights = tf.cast(mask, tf.float32)[:, :, None]
        mean = tf.reduce_sum(values * weights, 1) / tf.maximum(tf.reduce_sum(weights, 1), 1.0)
        return {"values": values, "keys": keys, "mask": mask}, {"h": tf.tanh(mean)}

    def step(self, token_ids, state, memory):
        """`(B, K)`, `{"h": (B, K, D)}` -> log_probs `(B, K, V)`, state, attention `(B, K, S)`."""
        inputs = tf.gather(self.target_embedding, token_ids)
        h = tf.tanh(tf.einsum("bkd,de->bke", inputs, self.input_weights) + tf.einsum("bkd,de->bke", state["h"], self.state_weights))
        energies = tf.einsum("bkd,bsd->bks", h, memory["keys"])
        energies = tf.where(memory["mask"][:, None, :], energies, -1e9)
        attention = tf.nn.softmax(energies, axis=-1)
        context = tf.einsum("bks,bsd->bkd", attention, memory["values"])
        hidden = tf.tanh(tf.einsum("bkd,de->bke", tf.concat([h, context], -1), self.combine_weights))
        logits = tf.einsum("bkd,dv->bkv", hidden, self.output_weights) + self.output_bias
        return tf.nn.log_softmax(logits, axis=-1), {"h": h}, attention

    def __call__(self, inputs, training=False):
        """Teacher forcing: `(source_ids (B, S), target_in_ids (B, T))` -> logits `(B, T, V)`."""
        source_ids, target_in = inputs
        memory, state = self.encode(tf.cast(source_ids, tf.int32))
        state = {"h": state["h"][:, None, :]}
        target_in = tf.cast(target_in, tf.int32)
        outputs = []
        for t in range(target_in.shape[1]):
            log_probs, state, _ = self.step(target_in[:, t : t + 1], state, memory)
            outputs.append(log_probs[:, 0])
        return tf.stack(outputs, axis=1)


class StepRecorder:
    """Wraps a model and records the shape `(B, K)` of the token ids of each `step` call (eager decoding),
    checking that the memory has as many sentences."""

    def __init__(self, model):
        self.model, self.shapes = model, []

    @property
    def rows(self):
        """The sentences of each call."""
        return [shape[0] for shape in self.shapes]

    def encode(self, source_ids):
        return self.model.encode(source_ids)

    def step(self, token_ids, state, memory):
        self.shapes.append(tuple(token_ids.shape))
        assert all(s.shape[0] == token_ids.shape[0] for s in tf.nest.flatten(memory))
        return self.model.step(token_ids, state, memory)


class MarkovModel:
    """Next-token log-probabilities that depend on the previous token only: a hand-made search problem.

    Args:
        transitions: dict `{previous_token: {token: probability}}`; the missing tokens
            share what probability is left.
        vocab_size: V.
    """

    def __init__(self, transitions, vocab_size=6):
        table = np.full((vocab_size, vocab_size), 1e-9)
        for previous, row in transitions.items():
            rest = [v for v in range(vocab_size) if v not in row]
            table[previous, rest] = max(1.0 - sum(row.values()), 1e-9) / len(rest)
            for token, probability in row.items():
                table[previous, token] = probability
        self.table = tf.constant(np.log(table / table.sum(1, keepdims=True)).astype(np.float32))

    def encode(self, source_ids):
        mask = tf.not_equal(source_ids, PAD_ID)
        return {"mask": mask}, {"h": tf.zeros([tf.shape(source_ids)[0], 1])}

    def step(self, token_ids, state, memory):
        weights = tf.cast(memory["mask"], tf.float32)
        weights = weights / tf.maximum(tf.reduce_sum(weights, 1, keepdims=True), 1.0)
        attention = tf.tile(weights[:, None, :], [1, tf.shape(token_ids)[1], 1])
        return tf.gather(self.table, token_ids), state, attention

    def __call__(self, inputs, training=False):
        """Teacher forcing: `(source_ids (B, S), target_in_ids (B, T))` -> logits `(B, T, V)`."""
        return tf.gather(self.table, tf.cast(inputs[1], tf.int32))


def reference_score(log_prob, length, coverage, source_length, alpha, normalization, beta):
    """The ranking score written out from the GNMT paper's formulas, in NumPy."""
    if normalization == "gnmt":
        divisor = ((5.0 + length) / 6.0) ** alpha
    else:
        divisor = float(length) ** alpha
    penalty = beta * np.sum(np.log(np.clip(coverage[:source_length], 1e-6, 1.0)))
    return log_prob / divisor + penalty


def exhaustive_search(model, source_ids, max_length, alpha=0.0, normalization="gnmt", beta=0.0):
    """Every hypothesis of one sentence, best first.

    A hypothesis ends with the end token at any length <= max_length, or is cut
    at max_length without one, and never contains PAD_ID or BOS_ID.

    Args:
        source_ids: int `(1, S)`.

    Returns:
        list of `(score, log_prob, tokens)` sorted by descending score.
    """
    source_length = int(np.sum(np.asarray(source_ids) != PAD_ID))
    memory, state = model.encode(tf.constant(source_ids, tf.int32))
    prefixes = [((), 0.0, np.zeros(np.shape(source_ids)[1]))]
    states = {"h": state["h"][:, None, :]}
    leaves = []
    for t in range(max_length):
        last = [prefix[-1] if prefix else BOS_ID for prefix, _, _ in prefixes]
        log_probs, new_states, attention = model.step(tf.constant([last], tf.int32), states, memory)
        log_probs, attention = log_probs.numpy()[0], attention.numpy()[0]
        grown, parents = [], []
        for i, (prefix, log_prob, coverage) in enumerate(prefixes):
            for token in ALLOWED_TOKENS:
                item = (prefix + (token,), log_prob + float(log_probs[i, token]), coverage + attention[i])
                if token == EOS_ID or t + 1 == max_length:
                    leaves.append(item)
                else:
                    grown.append(item)
                    parents.append(i)
        prefixes = grown
        states = {"h": tf.gather(new_states["h"], parents, axis=1)} if parents else None
    scored = [
        (reference_score(lp, len(tokens), coverage, source_length, alpha, normalization, beta), lp, tokens)
        for tokens, lp, coverage in leaves
    ]
    return sorted(scored, key=lambda item: -item[0])


def reference_beam_search(model, source_ids, beam_width, num_hypotheses, max_length, alpha=0.0):
    """The documented beam search for one sentence, written plainly: every step looks at all
    K * V extensions (a flat sort), no per-beam pruning, no batching, no early freezing.

    Returns:
        list of `(score, log_prob, tokens)`, best first.
    """
    divisor = lambda t: ((5.0 + t) / 6.0) ** alpha  # noqa: E731
    memory, state = model.encode(tf.constant(source_ids, tf.int32))
    live = [((), 0.0)]
    states = {"h": state["h"][:, None, :]}
    finished = []
    for t in range(max_length):
        tokens = [prefix[-1] if prefix else BOS_ID for prefix, _ in live]
        log_probs, new_states, _ = model.step(tf.constant([tokens], tf.int32), states, memory)
        log_probs = log_probs.numpy()[0]
        extensions = sorted(
            ((lp + float(log_probs[k, v]), k, v) for k, (_, lp) in enumerate(live)
             for v in range(log_probs.shape[1]) if v not in (PAD_ID, BOS_ID)),
            key=lambda item: -item[0],
        )  # stable: ties keep the lower (beam, token) first
        for lp, k, v in extensions[:beam_width]:
            if v == EOS_ID:
                finished.append((lp / divisor(t + 1), lp, live[k][0] + (v,)))
        kept = [item for item in extensions if item[2] != EOS_ID][:beam_width]
        live = [(live[k][0] + (v,), lp) for lp, k, v in kept]
        states = {"h": tf.gather(new_states["h"], [k for _, k, _ in kept], axis=1)}
        if t + 1 == max_length:
            finished.extend((lp / divisor(t + 1), lp, prefix) for prefix, lp in live)
        finished = sorted(finished, key=lambda item: -item[0])[:num_hypotheses]
        best_possible = max(lp for _, lp in live) / max(divisor(t + 2), divisor(max_length))
        if len(finished) == num_hypotheses and best_possible <= finished[-1][0]:
            break
    return finished


def hypotheses(result, sentence=0):
    """The token tuples of `result` for one sentence, cut at their lengths."""
    ids, lengths = result.ids.numpy()[sentence], result.lengths.numpy()[sentence]
    return [tuple(int(v) for v in ids[n, : lengths[n]]) for n in range(len(lengths))]


def sampling_distribution(model, source_ids, max_length, temperature=1.0, top_k=0):
    """The exact probability of every sentence `Sampling(temperature, top_k)` can draw for one source.

    At each step the allowed tokens (not PAD_ID, not BOS_ID) keep the `top_k` highest
    log-probabilities (all when 0) and are drawn from `softmax(log_prob / temperature)`;
    a sentence ends with the end token or is cut at `max_length`.

    Args:
        source_ids: int `(1, S)`.

    Returns:
        dict `{tokens: probability}`, probabilities summing to 1.
    """
    memory, state = model.encode(tf.constant(source_ids, tf.int32))
    allowed = [v for v in range(model.vocab_size) if v not in (PAD_ID, BOS_ID)]
    prefixes, states, outcomes = [((), 1.0)], {"h": state["h"][:, None, :]}, {}
    for t in range(max_length):
        last = [prefix[-1] if prefix else BOS_ID for prefix, _ in prefixes]
        log_probs, new_states, _ = model.step(tf.constant([last], tf.int32), states, memory)
        grown, parents = [], []
        for i, (prefix, probability) in enumerate(prefixes):
            untempered = log_probs.numpy()[0, i, allowed].astype(np.float64)
            row = untempered / temperature
            kept = np.argsort(-untempered, kind="stable")[: top_k or len(allowed)]  # the k most probable
            weights = np.zeros(len(allowed))
            weights[kept] = np.exp(row[kept] - row[kept].max())
            for token, weight in zip(allowed, weights / weights.sum()):
                if weight == 0.0:
                    continue  # outside the top k: never drawn
                item = (prefix + (token,), probability * weight)
                if token == EOS_ID or t + 1 == max_length:
                    outcomes[item[0]] = item[1]
                else:
                    grown.append(item)
                    parents.append(i)
        prefixes = grown
        states = {"h": tf.gather(new_states["h"], parents, axis=1)} if parents else None
    return outcomes
