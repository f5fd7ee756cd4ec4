"""zoo.models.flops against FLOP counts written out by hand for tiny models, and against their weights' shapes."""

import pytest

import zoo.models
from zoo.models import flops

# E embedding, U encoder units (M = 2U = 6), D decoder units, V target vocabulary; S, T lengths.
E, U, D, V, S, T = 4, 3, 5, 11, 7, 4


def test_luong_general_by_hand():
    model = zoo.models.build("luong_general", 9, V, embedding_dim=E, encoder_units=U, encoder_layers=2,
                             decoder_units=D, decoder_layers=2, dropout=0.0)
    expected = {
        # LSTM (4 gates), 2 directions: layer 1 reads E=4, layer 2 reads 2U=6; each adds U=3 recurrent rows.
        "encoder": S * (2 * 2 * (4 + 3) * 4 * 3 + 2 * 2 * (6 + 3) * 4 * 3),  # 7 * (336 + 432)
        # layer 1 reads [E y; h~] = 4 + 5 plus its state 5, layer 2 reads s^1 (5) plus 5.
        "decoder_rnn": T * (2 * (4 + 5 + 5) * 4 * 5 + 2 * (5 + 5) * 4 * 5),  # 4 * (560 + 400)
        # general: W h_j once per source token (6 x 5), s^T (W h_j) (5) and a_j h_j (6) per position and step.
        "attention": S * 2 * 6 * 5 + S * T * (2 * 5 + 2 * 6),  # 420 + 616
        "attentional": T * 2 * (6 + 5) * 5,  # W_c [c_t; s_t], (2U + D) x D
        "output_projection": T * 2 * 5 * 11,
        "bridge": 2 * (2 * 6 * 5),  # one 2U -> D bridge per decoder layer
    }
    assert flops.forward_flops(model, S, T) == expected
    assert sum(expected.values()) == 11252
    assert flops.train_flops_per_token(model, S, T) == pytest.approx(3 * 11252 / (7 + 4))


def test_tied_embeddings_by_hand():
    model = zoo.models.build("luong_general", 9, V, embedding_dim=E, encoder_units=U, decoder_units=D,
                             dropout=0.0, tie_embeddings=True)
    terms = flops.forward_flops(model, S, T)
    assert terms["output_bottleneck"] == T * 2 * 5 * 4  # P h~_t: D -> E
    assert terms["output_projection"] == T * 2 * 4 * 11  # E^T: E -> V
    same_size = zoo.models.build("luong_general", 9, V, embedding_dim=E, encoder_units=U, decoder_units=E,
                                 tie_embeddings=True)
    assert "output_bottleneck" not in flops.forward_flops(same_size, S, T)


def test_bahdanau_with_gru_cells_by_hand():
    model = zoo.models.build("bahdanau", 9, V, embedding_dim=E, encoder_cell="gru", encoder_units=U,
                             decoder_cell="gru", decoder_units=D, attention_units=2, output_units=3, dropout=0.0)
    expected = {
        "encoder": S * 2 * 2 * (4 + 3) * 3 * 3,  # GRU (3 gates), 2 directions, E=4 inputs + U=3 recurrent
        "decoder_rnn": T * 2 * (4 + 6 + 5) * 3 * 5,  # reads [E y_{i-1}; c_i] = 4 + 6, recurrent 5
        # additive, A=2: U_a h_j (6 x 2) per source token, W_a s_{i-1} (5 x 2) per step,
        # v^T tanh(.) (2) and a_j h_j (6) per position and step.
        "attention": S * 2 * 6 * 2 + T * 2 * 5 * 2 + S * T * (2 * 2 + 2 * 6),  # 168 + 80 + 448
        "deep_output": T * 2 * (5 + 6 + 4) * 2 * 3,  # [s_i; c_i; E y_{i-1}] -> 2L = 6 pieces of maxout
        "output_projection": T * 2 * 3 * 11,  # L = 3 -> V
        "bridge": 2 * 3 * 5,  # s_0 = tanh(W_s h_1_bwd), U -> D
    }
    assert flops.forward_flops(model, S, T) == expected
    assert sum(expected.values()) == 5274
    assert flops.train_flops_per_token(model, S, T) == pytest.approx(3 * 5274 / 11)


def test_rnnenc_by_hand():
    model = zoo.models.build("rnnenc", 9, V, embedding_dim=E, encoder_units=U, decoder_units=D, output_units=3)
    expected = {
        "encoder": S * 2 * 2 * (4 + 3) * 4 * 3,
        "decoder_rnn": T * 2 * (4 + 5) * 4 * 5,  # E y_{i-1} and s_{i-1}; c's gates come once per sentence
        "deep_output": T * 2 * (5 + 5 + 4) * 2 * 3,  # [s_i; c; E y_{i-1}]
        "output_projection": T * 2 * 3 * 11,
        "bridge": 2 * 6 * 5 + 2 * 5 * 5 + 2 * 5 * 4 * 5,  # summary c, s_0 = tanh(W c), c's gates
    }
    assert flops.forward_flops(model, S, T) == expected


@pytest.mark.parametrize("score, keys, query, per_position", [
    ("dot", 0, 0, 2 * 6),
    ("multiplicative", 2 * 6 * 6, 0, 2 * 6),  # the alias of general; D = M = 6 for dot
    ("concat", 2 * 6 * 2, 2 * 6 * 2, 2 * 2),
    ("reduced_rank", 2 * 6 * 3, 2 * 6 * 3, 2 * 3),
])  # fmt: skip
def test_the_other_scores_by_hand(score, keys, query, per_position):
    # A config dict is enough: no model is built. The context a_j h_j adds 2M = 12 per position and step.
    config = dict(zoo.models.get_preset("luong_dot").defaults, source_vocab_size=9, target_vocab_size=V,
                  encoder_units=3, decoder_units=6, attention=score, attention_units=2, attention_rank=3)
    assert flops.forward_flops(config, S, T)["attention"] == S * keys + T * query + S * T * (per_position + 12)


def test_the_luong_counts_are_its_kernels_sizes():
    # Each per-token term is 2 FLOPs per entry of the kernels it multiplies by, read from the built model.
    model = zoo.models.build("luong_general", 9, V, embedding_dim=E, encoder_units=U, encoder_layers=2,
                             decoder_units=D, decoder_layers=2, dropout=0.0)
    size = {w.path.removeprefix("luong_general/"): w.shape[0] * w.shape[1] for w in model.weights if len(w.shape) == 2}
    encoder = sum(n for path, n in size.items() if path.startswith("encoder/"))
    decoder = sum(n for path, n in size.items() if path.startswith("decoder_cell_"))
    terms = flops.forward_flops(model, 1, 1)
    assert terms["encoder"] == 2 * encoder
    assert terms["decoder_rnn"] == 2 * decoder
    assert terms["attentional"] == 2 * size["attentional/kernel"]
    assert terms["output_projection"] == 2 * size["output_projection/kernel"]
    assert terms["bridge"] == 2 * (size["bridge_0/kernel"] + size["bridge_1/kernel"])
    assert terms["attention"] == 2 * size["attention/kernel"] + 2 * (D + 2 * U)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="positive"):
        flops.train_flops_per_token({"output_units": 3}, 0, 4)
    with pytest.raises(ValueError, match="zoo Seq2Seq"):
        flops.forward_flops({"units": 3}, 7, 4)
