"""The Luong model against its paper's equations, in numpy, with the weights read back from the layers.

Nothing here calls the model's own code for the reference: the bidirectional encoder
([forward; backward] LSTM states over the real tokens only), the bridge, the stacked
decoder LSTM fed [E y_{t-1}; h~_{t-1}] (input feeding), the general score s_t^T W_a h_j
over the real source tokens, h~_t = tanh(W_c [c_t; s_t]) and softmax(W_s h~_t + b_s) are
written out from Luong et al. (2015), sections 3.1 and 3.3; with tied embeddings W_s is the
target embedding matrix times the bottleneck P (Press and Wolf, 2017, section 5).
"""

import numpy as np
import pytest

import zoo.models
from paper_equations import (
    DECODER, EMBEDDING, ENCODER, SOURCE, SOURCE_VOCAB, TARGET_IN, TARGET_VOCAB, encode, lstm,
    randomize, softmax, weights,
)


def output_kernel(w, tied):
    """W_s (D, V): the output projection's kernel, or P E^T with tied embeddings."""
    if not tied:
        return w["output_projection/kernel"]
    return w["output_bottleneck/kernel"] @ w["target_embedding/embeddings"].T


def reference_logits(w, source, target_in, input_feeding, tied=False):
    """Teacher-forced logits (T, V) of one sentence from the equations."""
    values, final_forward, final_backward = encode(w, source)
    s = np.tanh(np.concatenate([final_forward, final_backward]) @ w["bridge_0/kernel"] + w["bridge_0/bias"])
    c = np.zeros(DECODER)
    attentional = np.zeros(DECODER)  # h~_0
    kernel = w["decoder_cell_0/kernel"]
    logits = []
    for token in target_in:
        x = w["target_embedding/embeddings"][token]
        if input_feeding:
            x = np.concatenate([x, attentional])
        s, c = lstm(x, s, c, kernel, w["decoder_cell_0/recurrent_kernel"], w["decoder_cell_0/bias"])
        scores = (values @ w["attention/kernel"]) @ s  # s_t^T W_a h_j, (S,)
        a = softmax(scores)
        context = a @ values
        attentional = np.tanh(np.concatenate([context, s]) @ w["attentional/kernel"])  # h~_t
        logits.append(attentional @ output_kernel(w, tied) + w["output_projection/bias"])
    return np.stack(logits)


@pytest.mark.parametrize("input_feeding", [True, False])
def test_teacher_forced_logits_follow_the_equations(input_feeding):
    model = randomize(zoo.models.build("luong_general", SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=EMBEDDING,
                                       encoder_units=ENCODER, decoder_units=DECODER, dropout=0.0,
                                       input_feeding=input_feeding))
    logits = np.asarray(model((SOURCE, TARGET_IN), training=False))
    w = weights(model)
    for row in range(len(SOURCE)):
        source = SOURCE[row][SOURCE[row] != 0]
        steps = int((TARGET_IN[row] != 0).sum())
        expected = reference_logits(w, source, TARGET_IN[row][:steps], input_feeding)
        np.testing.assert_allclose(logits[row, :steps], expected, rtol=1e-4, atol=1e-5)


def test_the_reference_tells_input_feeding_apart():
    # The check above can fail: the equations without input feeding miss the model with it.
    model = randomize(zoo.models.build("luong_general", SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=EMBEDDING,
                                       encoder_units=ENCODER, decoder_units=DECODER, dropout=0.0, input_feeding=True))
    logits = np.asarray(model((SOURCE, TARGET_IN), training=False))
    w = weights(model)
    w["decoder_cell_0/kernel"] = w["decoder_cell_0/kernel"][:EMBEDDING]
    without = reference_logits(w, SOURCE[0], TARGET_IN[0], input_feeding=False)
    assert not np.allclose(logits[0], without, rtol=1e-4, atol=1e-5)  # the tolerance the match above meets


def test_tied_embeddings_follow_the_equations():
    model = randomize(zoo.models.build("luong_general", SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=EMBEDDING,
                                       encoder_units=ENCODER, decoder_units=DECODER, dropout=0.0,
                                       tie_embeddings=True))
    w = weights(model)
    assert "output_projection/kernel" not in w and w["output_bottleneck/kernel"].shape == (DECODER, EMBEDDING)
    untied = zoo.models.build("luong_general", SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=EMBEDDING,
                              encoder_units=ENCODER, decoder_units=DECODER)
    assert untied.count_params() - model.count_params() == DECODER * TARGET_VOCAB - DECODER * EMBEDDING
    logits = np.asarray(model((SOURCE, TARGET_IN), training=False))
    for row in range(len(SOURCE)):
        source = SOURCE[row][SOURCE[row] != 0]
        steps = int((TARGET_IN[row] != 0).sum())
        expected = reference_logits(w, source, TARGET_IN[row][:steps], input_feeding=True, tied=True)
        np.testing.assert_allclose(logits[row, :steps], expected, rtol=1e-4, atol=1e-5)


def test_tied_embeddings_share_one_matrix():
    # The output's gradient reaches the embedding (of a token never read as input), and a change of
    # the embedding changes the logits: one matrix, not a copy.
    import tensorflow as tf

    model = zoo.models.build("luong_general", SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=EMBEDDING,
                             encoder_units=ENCODER, decoder_units=EMBEDDING, dropout=0.0, tie_embeddings=True)
    assert model.output_bottleneck is None  # decoder_units == embedding_dim: h~_t is scored as it is
    unread = TARGET_VOCAB - 1
    assert not (TARGET_IN == unread).any()
    embeddings = model.target_embedding.embeddings
    with tf.GradientTape() as tape:
        logits = model((SOURCE, TARGET_IN), training=False)
        total = tf.reduce_sum(logits[..., unread])
    gradient = tape.gradient(total, embeddings)
    assert np.abs(np.asarray(gradient)[unread]).max() > 0
    before = np.asarray(logits)
    embeddings.assign_add(np.eye(TARGET_VOCAB, EMBEDDING, dtype="float32"))
    assert not np.allclose(np.asarray(model((SOURCE, TARGET_IN), training=False)), before)
