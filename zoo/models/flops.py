"""The matmul FLOPs of one training step per real token, counted from a model's sizes.

`train_flops_per_token(model, S, T)` reads the model's `get_config()` (or takes that dict)
and counts the matrix products of the teacher-forced forward pass over a sentence pair of
`S` source and `T` target tokens: a multiply-add is 2 FLOPs, and a training step is
`TRAIN_TO_FORWARD = 3` forward passes (the backward pass takes about two: each product's
gradient with respect to its input and to its weight). It is arithmetic on the sizes, with
no TensorFlow op, the same on every device and precision; `benchmarks/train.py` divides
the model's FLOP/s by a measured matmul peak with it.

Symbols: `E` embedding_dim; `U` encoder_units (per direction) and `M = 2U` the memory
(encoder output) size; `D` decoder_units; `V` target_vocab_size; `G` the gates of a cell, 4
for an LSTM and 3 for a GRU (`G_e` encoder, `G_d` decoder); `A` attention_units; `r`
attention_rank; `L` output_units (maxout units); `K` decoder_layers; `F = D` with input
feeding, else 0. A cell of input size `I` costs `2 (I + D) G D` a step (`W x + U h`).

Forward FLOPs of one pair, by term (`forward_flops`):

    encoder      S * sum_l 2 * 2 (I_l + U) G_e U, I_1 = E, I_l = 2U above: both directions
                 of every layer, input and recurrent projections (Bahdanau et al. 2015,
                 section 3.2 and appendix A.2.1)
    attention    S keys + T query + S T (score + 2M), by score (Luong et al. 2015, eq. 8;
                 Bahdanau et al. 2015, eq. 6 and appendix A.1.2); keys = `precompute(h_j)`
                 once per source token, query once per step, score per position and step:
                   dot           keys 0        query 0        score 2D
                   general       keys 2MD      query 0        score 2D
                   concat        keys 2MA      query 2DA      score 2A  (v^T tanh(.))
                   additive      keys 2MA      query 2DA      score 2A
                   reduced_rank  keys 2Mr      query 2Dr      score 2r
                 and 2M for the context c = sum_j a_j h_j (Luong section 3.1; Bahdanau eq. 5)
  Luong (sections 3.1, 3.3):
    decoder_rnn        T [2 (E + F + D) G_d D + (K - 1) 2 (2D) G_d D]: layer 1 reads
                       [E y_{t-1}; h~_{t-1}] (input feeding), layer k > 1 reads s_t^{k-1}
    attentional        T 2 (M + D) D, h~_t = tanh(W_c [c_t; s_t]) (eq. 5)
    output_projection  T 2 D V, softmax(W_s h~_t) (eq. 6); tied embeddings: T 2 E V,
                       softmax(E P h~_t), and output_bottleneck T 2 D E for P when D != E
    bridge             K 2 M D, tanh(W_b [h_fwd; h_bwd]) per layer, once per pair
  Bahdanau (RNNsearch, section 3 and appendix A.2.2):
    decoder_rnn        T 2 (E + M + D) G_d D, s_i = f(s_{i-1}, y_{i-1}, c_i) (below eq. 4)
    deep_output        T 2 (D + M + E) 2L, maxout of U_o s_i + C_o c_i + V_o E y_{i-1}
    output_projection  T 2 L V, the softmax's W_o t_i (A.2.2)
    bridge             2 U D, s_0 = tanh(W_s h_1_bwd) (A.2.2), once per pair
  RNNenc (Cho et al. 2014, the baseline of Bahdanau et al. 2015): no attention term
    decoder_rnn        T 2 (E + D) G_d D; the context's share of the gates comes once per pair
    deep_output        T 2 (D + D + E) 2L, on [s_i; c; E y_{i-1}]
    output_projection  T 2 L V
    bridge             2 M D + 2 D D + 2 D G_d D: c = tanh(V [h_fwd; h_bwd]), s_0 = tanh(W c)
                       and c's gates, once per pair

Left out: elementwise work (gate nonlinearities, softmax, tanh, maxout, dropout), embedding
lookups and the loss, O(size) per token against the products' O(size^2); and padding: the
counts are those of the real tokens. A batch's mean lengths give its average per token,
with the mean of `S T` taken as the product of the means.
"""

TRAIN_TO_FORWARD = 3  # a training step's matmul FLOPs over the forward pass's
GATES = {"lstm": 4, "gru": 3}


def _cell(input_dim, units, cell):
    """`2 (I + units) G units`: one step of a cell, `W x + U h` into its G gates."""
    if cell not in GATES:
        raise ValueError(f"no FLOP count for cell {cell!r}; expected one of {sorted(GATES)}")
    return 2 * (input_dim + units) * GATES[cell] * units


def encoder_flops(c):
    """Per source token: `sum_l 2 * 2 (I_l + U) G_e U` (the module docstring's "encoder")."""
    units, cell = c["encoder_units"], c["encoder_cell"]
    inputs = [c["embedding_dim"]] + [2 * units] * (c["encoder_layers"] - 1)
    return sum(2 * _cell(i, units, cell) for i in inputs)


def attention_flops(score, query_dim, memory_dim, units, rank, source, target):
    """`S keys + T query + S T (score + 2M)` of the score `score` (the module docstring's "attention")."""
    from zoo.layers import canonical_name

    name = canonical_name(score)
    hidden = {"dot": 0, "general": 0, "concat": units, "additive": units, "reduced_rank": rank}
    if name not in hidden:
        raise ValueError(f"no FLOP count for the attention score {name!r}; expected one of {sorted(hidden)}")
    keys = 2 * memory_dim * (query_dim if name == "general" else hidden[name])
    query = 2 * query_dim * hidden[name]
    score = 2 * (query_dim if name in ("dot", "general") else hidden[name])
    return source * keys + target * query + source * target * (score + 2 * memory_dim)


def _luong(c, source, target):
    d, m, cell = c["decoder_units"], 2 * c["encoder_units"], c["decoder_cell"]
    feed = d if c["input_feeding"] else 0
    e, tied = c["embedding_dim"], c.get("tie_embeddings", False)
    rnn = _cell(c["embedding_dim"] + feed, d, cell) + (c["decoder_layers"] - 1) * _cell(d, d, cell)
    return {
        "decoder_rnn": target * rnn,
        "attention": attention_flops(c["attention"], d, m, c["attention_units"], c["attention_rank"], source, target),
        "attentional": target * 2 * (m + d) * d,
        "output_projection": target * 2 * (e if tied else d) * c["target_vocab_size"],
        "bridge": c["decoder_layers"] * 2 * m * d,
        **({"output_bottleneck": target * 2 * d * e} if tied and d != e else {}),
    }


def _maxout_output(c, features, target):
    """deep_output `T 2 F 2L` on `F` features, output_projection `T 2 L V`."""
    units = c["output_units"]
    return {
        "deep_output": target * 2 * features * 2 * units,
        "output_projection": target * 2 * units * c["target_vocab_size"],
    }


def _bahdanau(c, source, target):
    d, m, e, cell = c["decoder_units"], 2 * c["encoder_units"], c["embedding_dim"], c["decoder_cell"]
    return {
        "decoder_rnn": target * _cell(e + m, d, cell),
        "attention": attention_flops("additive", d, m, c["attention_units"], None, source, target),
        **_maxout_output(c, d + m + e, target),
        "bridge": 2 * c["encoder_units"] * d,
    }


def _rnnenc(c, source, target):
    d, m, e, cell = c["decoder_units"], 2 * c["encoder_units"], c["embedding_dim"], c["decoder_cell"]
    return {
        "decoder_rnn": target * _cell(e, d, cell),
        **_maxout_output(c, d + d + e, target),
        "bridge": 2 * m * d + 2 * d * d + 2 * d * GATES[cell] * d,
    }


def forward_flops(model, source_length, target_length):
    """The forward pass's matmul FLOPs for one sentence pair, by term (formulas: the module docstring).

    Args:
        model: a zoo model (`LuongSeq2Seq`, `BahdanauSeq2Seq`, `RNNEncSeq2Seq`) or its
            `get_config()` dict.
        source_length, target_length: `S` and `T`, the real source tokens and the real
            target tokens (decoder steps) of the pair, or a batch's means.

    Returns:
        `{term: FLOPs}`: "encoder", "decoder_rnn", "attention" (not for RNNenc),
        "attentional" (Luong) or "deep_output" (Bahdanau, RNNenc), "output_projection", "bridge".
    """
    c = model if isinstance(model, dict) else model.get_config()
    if "attention" in c:
        terms = _luong(c, source_length, target_length)
    elif "attention_units" in c:
        terms = _bahdanau(c, source_length, target_length)
    elif "output_units" in c:
        terms = _rnnenc(c, source_length, target_length)
    else:
        raise ValueError(f"no FLOP count for a model with config keys {sorted(c)}; expected a zoo Seq2Seq model")
    return {"encoder": source_length * encoder_flops(c), **terms}


def train_flops_per_token(model, source_length, target_length):
    """`TRAIN_TO_FORWARD * sum(forward_flops) / (S + T)`: a training step's matmul FLOPs per real token.

    Per source-plus-target token, the unit of `benchmarks/train.py`'s `train_tokens_per_second`.
    """
    if source_length <= 0 or target_length <= 0:
        raise ValueError(f"source and target lengths must be positive, received {source_length}, {target_length}")
    total = sum(forward_flops(model, source_length, target_length).values())
    return TRAIN_TO_FORWARD * total / (source_length + target_length)
