"""The Luong model against its paper's equations, in numpy, with the weights read back from the layers.

Nothing here calls the model's own code for the reference: the bidirectional encoder
([forward; backward] LSTM states over the real tokens only), the bridge, the stacked
decoder LSTM fed [E y_{t-1}; h~_{t-1}] (input feeding), the general score s_t^T W_a h_j
over the real source tokens, h~_t = tanh(W_c [c_t; s_t]) and softmax(W_s h~_t + b_s) are
written out from Luong et al. (2015), sections 3.1 and 3.3.
"""

import numpy as np
import pytest

import zoo.models
from paper_equations import (
    DECODER, EMBEDDING, ENCODER, SOURCE, SOURCE_VOCAB, TARGET_IN, TARGET_VOCAB, encode, lstm,
    randomize, softmax, weights,
)


def reference_logits(w, source, target_in, input_feeding):
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
        logits.append(attentional @ w["output_projection/kernel"] + w["output_projection/bias"])
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
