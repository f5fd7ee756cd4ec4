"""Vocabulary selection: the learned table, its in-graph selection, and searches restricted to it."""

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import ToyModel
from test_decoding_presets import SOURCE, tiny_model

import zoo.models
from zoo.data import ShortlistTable, learn_shortlist
from zoo.data.vocabulary import EOS_ID
from zoo.decoding import BeamSearch, Greedy, Sampling, Shortlist, decode, sequence_log_prob
from zoo.decoding.extensions import BLOCK_SIZE

# Target tokens 4 and 6 occur 3 times each (4 wins the tie), 7, 8 and 9 once.
PAIRS = [([4, 5], [4, 6]), ([4, 6], [4, 7]), ([5], [6, 8]), ([4, 5, 5], [4, 6, 9])]
# Sentence-level co-occurrences, without the always-allowed 0-4: source 4 with 6 (twice), 7 and
# 9 (once: 7 is the lower id); source 5 with 6 (3 pairs), 8 and 9; source 6 with 7 only.
EXPECTED_ROWS = [[3, 3], [3, 3], [3, 3], [3, 3], [6, 7], [6, 8], [7, 3], [3, 3]]


def hand_made_table():
    return learn_shortlist(PAIRS, source_vocab_size=8, target_vocab_size=10, k=2, frequent=1)


def test_learned_rows_and_always_allowed_ids_of_a_hand_made_corpus(tmp_path):
    table = hand_made_table()
    np.testing.assert_array_equal(table.rows, EXPECTED_ROWS)
    np.testing.assert_array_equal(table.always, [0, 1, 2, 3, 4])  # reserved ids and the most frequent
    assert (table.k, table.frequent, table.target_vocab_size) == (2, 1, 10)
    np.testing.assert_array_equal(table.allowed([5, 6, 0]), [0, 1, 2, 3, 4, 6, 7, 8])
    # Without frequent ids, rows may hold the frequent token 4: source 5 meets 6 in more pairs.
    np.testing.assert_array_equal(learn_shortlist(PAIRS, 8, 10, k=1, frequent=0).rows[4:7, 0], [4, 6, 4])

    table.save(tmp_path / "shortlist.npz")
    loaded = ShortlistTable.load(tmp_path / "shortlist.npz")
    np.testing.assert_array_equal(loaded.rows, table.rows)
    np.testing.assert_array_equal(loaded.always, table.always)
    assert loaded.settings() == {"k": 2, "frequent": 1}
    np.savez(tmp_path / "other.npz", rows=table.rows)
    with pytest.raises(ValueError, match="other.npz: not a shortlist table"):
        ShortlistTable.load(tmp_path / "other.npz")
    with pytest.raises(ValueError, match="expected integers k >= 1 and frequent >= 0, received k=0"):
        learn_shortlist(PAIRS, 8, 10, k=0, frequent=1)
    for k, frequent in ((1.5, 1), (2, 0.5), (True, 1)):
        with pytest.raises(ValueError, match=f"received k={k!r}, frequent={frequent!r}"):
            learn_shortlist(PAIRS, 8, 10, k=k, frequent=frequent)
    assert learn_shortlist(PAIRS, 8, 10, k=np.int64(2), frequent=np.int32(1)).settings() == {"k": 2, "frequent": 1}


def test_the_batch_scores_the_union_and_masks_each_sentence_to_its_own_ids():
    shortlist = Shortlist(hand_made_table())
    # The union's ids first, ascending, then others up to a whole number of top-k blocks (at most V).
    ids, allowed = shortlist.select(tf.constant([[4, 0, 0], [6, 5, 0]]))
    np.testing.assert_array_equal(ids, [0, 1, 2, 3, 4, 6, 7, 8, 5, 9])
    np.testing.assert_array_equal(allowed, [[True] * 7 + [False] * 3, [True] * 8 + [False] * 2])
    mask = shortlist.sentence_mask(tf.constant([[4, 0, 0], [6, 5, 0]])).numpy()
    np.testing.assert_array_equal(np.flatnonzero(mask[0]), hand_made_table().allowed([4]))
    ids, allowed = shortlist.select(tf.zeros([0, 3], tf.int32))  # an empty batch: the always-allowed ids
    np.testing.assert_array_equal(ids[:5], [0, 1, 2, 3, 4])
    assert allowed.shape == (0, 10)
    rows = np.array([[EOS_ID], [EOS_ID], [EOS_ID], [EOS_ID], [250]], np.int32)
    wide = Shortlist(ShortlistTable(rows, np.arange(70, dtype=np.int32), 300, 70))  # V = 300, 70 always allowed
    ids, allowed = wide.select(tf.constant([[4, 0], [3, 0]]))
    np.testing.assert_array_equal(ids, [*range(70), 250, *range(70, 127)])  # 71 -> 2 blocks of BLOCK_SIZE
    np.testing.assert_array_equal(allowed.numpy().sum(1), [71, 70])
    assert BLOCK_SIZE == 64  # what the 128 ids above assume
    # With static shapes: min(V, always + B * S * k) ids, the union's first.
    static = Shortlist(hand_made_table(), static_shapes=True)
    ids, allowed = static.select(tf.constant([[4, 0]]))  # 5 + 1 * 2 * 2 = 9 of 10
    np.testing.assert_array_equal(ids, [0, 1, 2, 3, 4, 6, 7, 5, 8])
    np.testing.assert_array_equal(allowed, [[True] * 7 + [False] * 2])
    ids, allowed = static.select(tf.constant([[4, 0, 0], [6, 5, 0]]))  # 5 + 2 * 3 * 2 > 10: all of them
    np.testing.assert_array_equal(ids, [0, 1, 2, 3, 4, 6, 7, 8, 5, 9])
    np.testing.assert_array_equal(allowed, [[True] * 7 + [False] * 3, [True] * 8 + [False] * 2])


def every_id(source_vocab_size=14, target_vocab_size=12):
    """A table that allows every target id: the search over the whole vocabulary."""
    rows = np.full([source_vocab_size, 1], EOS_ID, np.int32)
    return Shortlist(ShortlistTable(rows, np.arange(target_vocab_size, dtype=np.int32), target_vocab_size, 0))


STRATEGIES = {
    "greedy": Greedy(length_penalty=0.6),
    "beam": BeamSearch(3, num_hypotheses=3, length_penalty=0.6),
    "sampling": Sampling(temperature=1.0, seed=7),
}


@pytest.mark.parametrize("name, overrides", [("luong_general", {}), ("luong_general", {"tie_embeddings": True}),
                                             ("bahdanau", {}), ("rnnenc", {})])
def test_a_shortlist_of_every_id_is_the_full_vocabulary_search_exactly(name, overrides):
    model = tiny_model(name, **overrides)
    for strategy in STRATEGIES.values():
        full = decode(model, SOURCE, strategy, max_length=7)
        listed = decode(model, SOURCE, strategy, max_length=7, shortlist=every_id())
        for field in full._fields:
            np.testing.assert_array_equal(getattr(listed, field), getattr(full, field), err_msg=field)


def test_a_mixed_precision_model_restricts_its_output_in_its_compute_dtype():
    tf.keras.utils.set_random_seed(0)
    model = zoo.models.build("bahdanau", 14, 12, embedding_dim=8, encoder_units=8, decoder_units=16,
                             attention_units=8, output_units=8, dtype="mixed_bfloat16")
    output = model.restrict_output(tf.constant([0, 3, 5]))
    assert (output.kernel.dtype, output.kernel.shape, output.bias.dtype) == (tf.bfloat16, (8, 3), tf.float32)
    strategy = BeamSearch(3, num_hypotheses=2, length_penalty=0.6)
    full = decode(model, SOURCE, strategy, max_length=7)
    listed = decode(model, SOURCE, strategy, max_length=7, shortlist=every_id())
    for field in full._fields:
        np.testing.assert_array_equal(getattr(listed, field), getattr(full, field), err_msg=field)


def test_a_shortlist_needs_a_model_that_restricts_its_output():
    with pytest.raises(TypeError, match="a shortlist needs a model with restrict_output .* received <decoding_toy"):
        decode(ToyModel(), SOURCE, Greedy(), shortlist=every_id())


def restricting_table(model):
    """A table whose rows leave out tokens the full search produces (so that it changes the search)."""
    rng = np.random.default_rng(0)
    rows = rng.integers(4, 12, size=[14, 2]).astype(np.int32)
    return ShortlistTable(rows, np.array([0, 1, 2, 3, 4], np.int32), 12, 1)


def test_a_search_with_a_shortlist_only_produces_each_sentences_own_ids():
    model = tiny_model("luong_general")
    table = restricting_table(model)
    shortlist = Shortlist(table)
    changed = False
    for strategy in STRATEGIES.values():
        full = decode(model, SOURCE, strategy, max_length=7)
        result = decode(model, SOURCE, strategy, max_length=7, shortlist=shortlist)
        for row, source in enumerate(SOURCE):
            produced = result.ids[row].numpy()[result.ids[row].numpy() > 0]
            assert set(produced) <= set(table.allowed(source)), (row, produced)
            changed |= not np.isin(full.ids[row].numpy(), table.allowed(source)).all()
        for n in range(result.ids.shape[1]):  # log-probabilities normalized over each sentence's ids
            scored = sequence_log_prob(model, SOURCE, result.ids[:, n], append_end=False, shortlist=shortlist)
            np.testing.assert_allclose(scored, result.log_probs[:, n], rtol=1e-5, atol=1e-5)
        alone = decode(model, SOURCE[1:2, :2], strategy, max_length=7, shortlist=shortlist)
        np.testing.assert_array_equal(alone.ids[0], result.ids[1])
        np.testing.assert_allclose(alone.scores[0], result.scores[1], rtol=1e-5)
    assert changed, "the table should leave out tokens the full search produces"


def test_a_shortlist_search_compiles_with_xla():
    model = tiny_model("bahdanau")
    strategy = BeamSearch(3, num_hypotheses=2, length_penalty=0.6)
    eager = decode(model, SOURCE, strategy, max_length=7, shortlist=Shortlist(restricting_table(model)))
    shortlist = Shortlist(restricting_table(model), static_shapes=True)
    compiled = tf.function(lambda source: decode(model, source, strategy, max_length=7, shortlist=shortlist),
                           jit_compile=True)
    result = compiled(tf.constant(SOURCE))
    np.testing.assert_array_equal(result.ids, eager.ids)
    np.testing.assert_allclose(result.scores, eager.scores, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, overrides", [("luong_general", {}), ("luong_general", {"tie_embeddings": True}),
                                             ("bahdanau", {})])
def test_the_whole_projection_made_once_per_batch_scores_as_the_steps_own_output_layer(name, overrides):
    """`restrict_output(None)`, which the searches pass to every step, is the vocabulary projection itself."""
    model = tiny_model(name, **overrides)
    memory, state = model.encode(tf.constant(SOURCE))
    state = tf.nest.map_structure(lambda s: tf.expand_dims(s, 1), state)
    tokens = tf.fill([len(SOURCE), 1], 1)
    own, _, _ = model.step(tokens, state, memory)
    whole = model.restrict_output(None)
    assert whole.kernel.shape == (whole.kernel.shape[0], model.target_vocab_size) and whole.allowed is None
    ready, _, _ = model.step(tokens, state, memory, output=whole)
    np.testing.assert_allclose(ready, own, rtol=1e-6, atol=1e-6)
