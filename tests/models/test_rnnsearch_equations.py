"""RNNsearch and RNNenc against their papers' equations, in numpy, with the weights read back.

RNNsearch (Bahdanau et al., 2015, section 3 and appendix A): the additive score
v^T tanh(W h_j + U s_{i-1}) on the *previous* state, the context fed into the RNN with
E y_{i-1}, s_0 = tanh(W_s h_1_bwd), and the deep maxout output on [s_i; c_i; E y_{i-1}].
RNNenc (Cho et al., 2014): one summary c = tanh(V [h_T_fwd; h_1_bwd]) read at every step,
s_0 = tanh(W c), the same maxout output on [s_i; c; E y_{i-1}].
"""

import numpy as np
import pytest

import zoo.models
from paper_equations import (
    DECODER, EMBEDDING, ENCODER, SOURCE, SOURCE_VOCAB, TARGET_IN, TARGET_VOCAB, encode, lstm,
    maxout, randomize, softmax, weights,
)

ATTENTION, OUTPUT = 6, 4


def deep_output(w, s, context, embedded):
    hidden = np.concatenate([s, context, embedded]) @ w["maxout_output/deep_output/kernel"]
    t = maxout(hidden + w["maxout_output/deep_output/bias"])
    return t @ w["maxout_output/output_projection/kernel"] + w["maxout_output/output_projection/bias"]


def rnnsearch_logits(w, source, target_in, attend_to_previous=True):
    values, _, final_backward = encode(w, source)
    s = np.tanh(final_backward @ w["bridge/kernel"] + w["bridge/bias"])
    c = np.zeros(DECODER)
    keys = values @ w["attention/value_kernel"]
    logits = []
    for token in target_in:
        embedded = w["target_embedding/embeddings"][token]

        def context_of(query):
            scores = np.tanh(keys + query @ w["attention/query_kernel"]) @ w["attention/score_vector"]
            return softmax(scores) @ values

        context = context_of(s)  # c_i from s_{i-1}
        s, c = lstm(np.concatenate([embedded, context]), s, c, w["decoder_cell/kernel"],
                    w["decoder_cell/recurrent_kernel"], w["decoder_cell/bias"])
        if not attend_to_previous:
            context = context_of(s)
        logits.append(deep_output(w, s, context, embedded))
    return np.stack(logits)


def rnnenc_logits(w, source, target_in):
    _, final_forward, final_backward = encode(w, source)
    context = np.tanh(np.concatenate([final_forward, final_backward]) @ w["summary/kernel"] + w["summary/bias"])
    s = np.tanh(context @ w["bridge/kernel"] + w["bridge/bias"])
    c = np.zeros(DECODER)
    logits = []
    for token in target_in:
        embedded = w["target_embedding/embeddings"][token]
        s, c = lstm(np.concatenate([embedded, context]), s, c, w["decoder_cell/kernel"],
                    w["decoder_cell/recurrent_kernel"], w["decoder_cell/bias"])
        logits.append(deep_output(w, s, context, embedded))
    return np.stack(logits)


def build(preset):
    extra = {"attention_units": ATTENTION} if preset == "bahdanau" else {}
    return randomize(zoo.models.build(preset, SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=EMBEDDING,
                                      encoder_units=ENCODER, decoder_units=DECODER, dropout=0.0,
                                      output_units=OUTPUT, **extra))


@pytest.mark.parametrize("preset, reference", [("bahdanau", rnnsearch_logits), ("rnnenc", rnnenc_logits)])
def test_teacher_forced_logits_follow_the_equations(preset, reference):
    model = build(preset)
    logits, attention = (np.asarray(x) for x in model.teacher_forcing((SOURCE, TARGET_IN), training=False))
    w = weights(model)
    for row in range(len(SOURCE)):
        source = SOURCE[row][SOURCE[row] != 0]
        steps = int((TARGET_IN[row] != 0).sum())
        np.testing.assert_allclose(logits[row, :steps], reference(w, source, TARGET_IN[row][:steps]),
                                   rtol=1e-4, atol=1e-5)
    if preset == "rnnenc":
        assert not attention.any()  # no attention: all-zero weights


def test_the_reference_tells_the_previous_state_from_the_current_one():
    # Attention on s_i (Luong's place) instead of s_{i-1} gives other logits: the check above can fail.
    model = build("bahdanau")
    logits = np.asarray(model((SOURCE, TARGET_IN), training=False))
    wrong = rnnsearch_logits(weights(model), SOURCE[0], TARGET_IN[0], attend_to_previous=False)
    assert not np.allclose(logits[0], wrong, rtol=1e-4, atol=1e-5)
