"""The encoder-decoder presets: teacher forcing agrees with step-by-step decoding."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
from keras import ops

import zoo.layers
import zoo.models

TINY = dict(embedding_dim=8, encoder_units=6, decoder_units=12, dropout=0.0)
EXTRA = dict(attention_units=7, attention_rank=3, output_units=5)
SOURCE = np.array([[4, 5, 6, 7, 8], [9, 10, 11, 0, 0], [12, 0, 0, 0, 0]], "int32")
TARGET_IN = np.array([[2, 4, 5, 6], [2, 7, 8, 0], [2, 9, 0, 0]], "int32")


def tiny(name, **overrides):
    config = dict(TINY)
    config.update({k: v for k, v in EXTRA.items() if k in zoo.models.get_preset(name).defaults})
    config.update(overrides)
    keras.utils.set_random_seed(1)
    return zoo.models.build(name, 20, 15, **config)


def tile(state, k):
    return tuple(ops.repeat(ops.expand_dims(s, 1), k, axis=1) for s in state)


def test_catalog_names():
    assert zoo.models.presets() == [
        "rnnenc", "bahdanau", "luong_dot", "luong_general", "luong_concat", "reduced_rank"
    ]
    for name in zoo.models.presets():
        preset = zoo.models.get_preset(name)
        assert preset.paper and preset.description


@pytest.mark.parametrize("name", zoo.models.presets())
def test_step_by_step_equals_teacher_forcing(name):
    model = tiny(name)
    logits = ops.convert_to_numpy(model((SOURCE, TARGET_IN)))
    assert logits.shape == (3, 4, 15)
    forced_logits, forced_attention = (ops.convert_to_numpy(x) for x in model.teacher_forcing((SOURCE, TARGET_IN)))
    np.testing.assert_array_equal(forced_logits, logits)
    assert forced_attention.shape == (3, 4, 5) and forced_attention.dtype == np.float32
    expected = ops.convert_to_numpy(ops.log_softmax(logits, axis=-1))
    memory, state = model.encode(SOURCE)
    state = tile(state, 2)  # two identical hypotheses per sentence share one memory
    for t in range(TARGET_IN.shape[1]):
        tokens = np.repeat(TARGET_IN[:, t : t + 1], 2, axis=1)
        log_probs, state, attention = model.step(tokens, state, memory)
        log_probs = ops.convert_to_numpy(log_probs)
        attention = ops.convert_to_numpy(attention)
        assert log_probs.shape == (3, 2, 15) and attention.shape == (3, 2, 5)
        np.testing.assert_allclose(log_probs[:, 0], expected[:, t], atol=1e-5)
        np.testing.assert_allclose(log_probs[:, 1], expected[:, t], atol=1e-5)
        np.testing.assert_allclose(attention[:, 0], forced_attention[:, t], atol=1e-6)
        np.testing.assert_allclose(attention[:, 1], forced_attention[:, t], atol=1e-6)
        # Padded source positions get no attention; real ones sum to one.
        padding = np.broadcast_to((SOURCE == 0)[:, None, :], attention.shape)
        np.testing.assert_array_equal(attention[padding], 0.0)
        sums = attention.sum(-1)
        if name == "rnnenc":
            np.testing.assert_array_equal(attention, 0.0)
        else:
            np.testing.assert_allclose(sums, 1.0, atol=1e-5)


@pytest.mark.parametrize("name", ["bahdanau", "luong_general", "rnnenc"])
def test_padding_does_not_change_a_sentence(name):
    model = tiny(name)
    alone = ops.convert_to_numpy(model((SOURCE[2:, :1], TARGET_IN[2:, :2])))
    batched = ops.convert_to_numpy(model((SOURCE, TARGET_IN)))
    np.testing.assert_allclose(alone[0], batched[2, :2], atol=1e-5)


@pytest.mark.parametrize("name", ["bahdanau", "luong_concat", "rnnenc", "reduced_rank"])
def test_keras_save_and_load_give_identical_outputs(name, tmp_path):
    model = tiny(name)
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded) is type(model) and loaded.get_config() == model.get_config()
    np.testing.assert_array_equal(
        ops.convert_to_numpy(model((SOURCE, TARGET_IN))), ops.convert_to_numpy(loaded((SOURCE, TARGET_IN)))
    )


def test_a_saved_model_loads_in_a_fresh_process_after_the_documented_imports(tmp_path):
    """docs/interfaces.md: `import zoo.models` for `load_model(path, compile=False)`, `zoo.training` too compiled."""
    from zoo.training.loss import TokenCrossEntropy
    from zoo.training.optimizer import CrossReplicaAdam

    model = tiny("bahdanau")
    model.compile(optimizer=CrossReplicaAdam(), loss=TokenCrossEntropy())  # as best.keras is saved
    path = os.path.join(tmp_path, "best.keras")
    model.save(path)
    code = (f"import keras, zoo.models\nmodel = keras.models.load_model({path!r}, compile=False)\n"
            f"import zoo.training\ncompiled = keras.models.load_model({path!r})\n"
            "print(type(model).__name__, model.compiled, compiled.compiled, type(compiled.loss).__name__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["BahdanauSeq2Seq", "False", "True", "TokenCrossEntropy"]


def test_gru_cells_and_stacked_layers():
    model = tiny("luong_general", encoder_cell="gru", decoder_cell="gru", encoder_layers=2, decoder_layers=2)
    assert len(model.encode(SOURCE)[1]) == 3  # two GRU states and the input feed
    assert ops.convert_to_numpy(model((SOURCE, TARGET_IN))).shape == (3, 4, 15)


def test_stacked_decoder_cells_are_built_before_the_time_loop():
    # The cells above the first were built inside the loop, at the first call: under JAX their weights were
    # tracers of build()'s scan, and every later call failed with an UnexpectedTracerError.
    model = zoo.models.LuongSeq2Seq(20, 15, decoder_layers=3, **TINY)
    model.encode(SOURCE)
    assert [cell.built for cell in model.cells] == [True, True, True]
    model = tiny("luong_general", decoder_layers=2)
    assert ops.convert_to_numpy(model((SOURCE, TARGET_IN))).shape == (3, 4, 15)


def test_one_fit_step_lowers_the_loss():
    model = tiny("luong_general")
    model.compile(
        optimizer=keras.optimizers.Adam(0.05),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
    )
    target_out = np.array([[4, 5, 6, 3], [7, 8, 3, 0], [9, 3, 0, 0]], "int32")
    before = model.evaluate((SOURCE, TARGET_IN), target_out, batch_size=3, verbose=0)
    model.fit((SOURCE, TARGET_IN), target_out, epochs=1, batch_size=3, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 1
    assert model.evaluate((SOURCE, TARGET_IN), target_out, batch_size=3, verbose=0) < before


def test_errors_name_what_was_wrong():
    with pytest.raises(ValueError, match="Unknown model preset 'transformer'.*rnnenc"):
        zoo.models.build("transformer", 10, 10)
    with pytest.raises(ValueError, match="bad override.*no_such_field"):
        zoo.models.build("bahdanau", 10, 10, no_such_field=3)
    with pytest.raises(ValueError, match="Preset 'luong_dot' with .*encoder_units=5.*: .*query dim 12 and value dim 10"):
        tiny("luong_dot", encoder_units=5)
    with pytest.raises(ValueError, match="source_vocab_size must be an int >= 4"):
        zoo.models.build("bahdanau", 0, 10)


@pytest.mark.parametrize("name", ["bahdanau", "luong_general", "rnnenc"])
def test_mixed_bfloat16_model_keeps_weights_and_lstm_cell_state_in_float32(name, tmp_path):
    model = tiny(name, dtype="mixed_bfloat16")  # the model's policy, not a global one
    logits = model((SOURCE, TARGET_IN))
    memory, state = model.encode(SOURCE)
    log_probs, state, attention = model.step(TARGET_IN[:, :1], tuple(ops.expand_dims(s, 1) for s in state), memory)
    assert all(w.dtype == "float32" for w in model.weights)
    dtype = keras.backend.standardize_dtype
    assert dtype(logits.dtype) == "float32"  # for the loss
    assert dtype(state[0].dtype) == "bfloat16"  # the hidden state h
    assert dtype(state[1].dtype) == "float32"  # the LSTM cell state c
    assert dtype(log_probs.dtype) == "float32" and dtype(attention.dtype) == "float32"
    assert np.all(np.isfinite(ops.convert_to_numpy(log_probs)))
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    loaded = keras.models.load_model(path)  # the policy travels with the model
    np.testing.assert_array_equal(
        ops.convert_to_numpy(ops.cast(logits, "float32")),
        ops.convert_to_numpy(ops.cast(loaded((SOURCE, TARGET_IN)), "float32")),
    )


def test_presets_take_their_sizes_from_the_one_home_of_defaults():
    defaults = zoo.models.defaults
    for name in zoo.models.presets():
        preset = zoo.models.get_preset(name)
        for field in defaults.SIZE_FIELDS + defaults.CHOICE_FIELDS + ("dropout",):
            if field in preset.defaults and field != "attention":
                assert preset.defaults[field] == getattr(defaults, field.upper()), (name, field)
    assert zoo.models.get_preset("luong_dot").defaults["attention"] == "dot"
    assert set(zoo.models.get_preset("rnnenc").defaults) == set(TINY) | {
        "encoder_cell", "encoder_layers", "encoder_implementation", "decoder_cell", "output_units"
    }
    model = zoo.models.LuongSeq2Seq(10, 10)  # the class itself has the same defaults
    assert (model.embedding_dim, model.decoder_units, model.dropout, model.attention_rank) == (256, 512, 0.2, 64)


@pytest.mark.parametrize("attention", zoo.layers.names() + sorted(zoo.layers.aliases()))
def test_luong_decoder_takes_every_registered_score(attention):
    model = tiny("luong_general", attention=attention, encoder_units=6, decoder_units=12)
    expected = zoo.layers.get(attention, {"units": 7, "rank": 3})
    assert type(model.attention) is type(expected) and model.attention.get_config()["name"] == "attention"
    for size in ("units", "rank"):
        assert getattr(model.attention, size, None) == getattr(expected, size, None)
    assert model.get_config()["attention"] == attention
    assert ops.convert_to_numpy(model((SOURCE, TARGET_IN))).shape == (3, 4, 15)


def test_luong_without_input_feeding_has_no_feed_state():
    fed, unfed = tiny("luong_general"), tiny("luong_general", input_feeding=False, decoder_layers=2)
    assert len(fed.encode(SOURCE)[1]) == 3  # LSTM h, c and the attentional vector
    assert len(unfed.encode(SOURCE)[1]) == 4  # two LSTM layers, nothing fed back
    assert unfed.cells[0].kernel.shape[0] == 8  # reads the embedding only


def test_recipe_overrides_keep_what_the_preset_takes():
    fields = dict(TINY, output_units=5, attention_rank=3, attention=None, decoder_layers=None, input_feeding=None)
    assert zoo.models.recipe_overrides("luong_dot", fields) == dict(TINY, attention_rank=3)
    assert zoo.models.recipe_overrides("rnnenc", fields) == dict(TINY, output_units=5)
    fields.update(attention="concat", decoder_layers=2, input_feeding=False)
    overrides = zoo.models.recipe_overrides("luong_dot", fields)
    assert (overrides["attention"], overrides["decoder_layers"], overrides["input_feeding"]) == ("concat", 2, False)
    with pytest.raises(ValueError, match=r"attention='concat' does not apply to preset 'bahdanau'.*'luong_dot'"):
        zoo.models.recipe_overrides("bahdanau", fields)


def test_bad_choices_name_the_field_and_the_allowed_values():
    with pytest.raises(ValueError, match=r"attention: unknown attention 'luong'; expected one of \['additive'"):
        zoo.models.check("luong_general", attention="luong")
    with pytest.raises(ValueError, match=r"decoder_layers must be an int >= 1, received 0"):
        zoo.models.check("luong_general", decoder_layers=0)
    with pytest.raises(ValueError, match=r"input_feeding must be True or False, received 'yes'"):
        zoo.models.check("luong_general", input_feeding="yes")
    zoo.models.check("luong_general", attention="bahdanau", decoder_layers=3, input_feeding=False)


@pytest.mark.parametrize("override, words", [
    ({"dropout": 1.5}, r"dropout must be a number in \[0, 1\), received 1.5"),  # not Keras' `rate`
    ({"output_units": 0}, "output_units must be an int >= 1, received 0"),  # not Dense's `units`
    ({"encoder_units": 8.0}, "encoder_units must be an int >= 1, received 8.0"),
    ({"decoder_layers": True}, "decoder_layers must be an int >= 1, received True"),
])
def test_bad_sizes_and_rates_are_named_as_the_caller_gave_them(override, words):
    with pytest.raises(ValueError, match=f"Preset 'luong_general': bad override: {words}"):
        zoo.models.build("luong_general", 10, 6, **override)
    with pytest.raises(ValueError, match=words):
        zoo.models.check("rnnenc", **override)


@pytest.mark.parametrize("source, target, error, words", [
    ([[4, -1, 6]], [[2, 4]], ValueError, r"source_ids must be token ids in \[0, 10\), received -1"),  # not id 9
    ([[4.7, 5.2, 6.9]], [[2, 4]], TypeError, "source_ids must hold integer token ids, received dtype float"),
    ([[4, 5, 6], [7, 8, 0]], [[2, 4]], ValueError, "source_ids and target_in_ids must have as many sentences"),
    ([4, 5, 6], [[2, 4]], ValueError, r"source_ids must have shape \(batch, length\), received shape \(3,\)"),
    ([[4, 5, 6]], [[2, 9]], ValueError, r"target_in_ids must be token ids in \[0, 6\), received 9"),
])
def test_a_model_called_on_bad_ids_names_them(source, target, error, words):
    model = zoo.models.build("luong_general", 10, 6, embedding_dim=8, encoder_units=8, decoder_units=16)
    with pytest.raises(error, match=words):
        model((np.array(source), np.array(target)))
    assert model((np.array([[4, 5, 6]]), np.array([[2, 4]]))).shape == (1, 2, 6)


@pytest.mark.parametrize("source, target, words", [
    (np.zeros((2, 0), "int32"), [[2, 4], [2, 5]], r"source_ids must have at least one position per sentence, "
                                                  r"received shape \(2, 0\)"),
    ([[4, 5, 6]], np.zeros((1, 0), "int32"), r"target_in_ids must have at least one position per sentence"),
])
def test_a_model_called_on_empty_sentences_names_them(source, target, words):
    # The encoder's and the decoder's loops read a first step: backends failed inside them (StridedSlice, IndexError).
    model = zoo.models.build("luong_general", 10, 6, embedding_dim=8, encoder_units=8, decoder_units=16)
    with pytest.raises(ValueError, match=words):
        model((np.array(source), np.array(target)))


@pytest.mark.parametrize("predict", [False, True])
def test_a_model_given_source_ids_alone_asks_for_the_pair(predict):
    # model(source_ids) and model.predict(source_ids) unpacked the batch's rows as the pair (or failed in the
    # graph: "Iterating over a symbolic tf.Tensor is not allowed"; JAX: "'NoneType' object is not callable").
    model = zoo.models.build("luong_general", 10, 6, embedding_dim=8, encoder_units=8, decoder_units=16)
    source = np.array([[4, 5, 6], [7, 8, 0]], "int32")
    words = r"inputs must be \(source_ids, target_in_ids\).*received one tensor of shape \(2, 3\)"
    with pytest.raises(ValueError, match=words if not predict else r"inputs must be \(source_ids, target_in_ids\)"):
        model.predict(source, verbose=0) if predict else model(source)
