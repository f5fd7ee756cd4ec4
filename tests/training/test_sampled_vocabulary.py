"""Training over a sampled target vocabulary: the ids it picks, the logits it computes, a run with it."""

import numpy as np
import pytest
import tensorflow as tf

from recipes import load_config
from zoo.training import build_model, train_and_evaluate
from zoo.training.sampled_vocabulary import sample_vocabulary, with_sampled_vocabulary
from zoo.config_checks import config_problems

TARGETS = np.array([[7, 3, 2, 0, 0], [9, 9, 40, 3, 2], [5, 2, 0, 0, 0]], np.int32)  # 0 = padding, 2 = </s>


def _sample(targets, size, seed=(0, 1), vocab=50):
    ids, positions = sample_vocabulary(tf.constant(targets), vocab, size, tf.constant(seed, tf.int64))
    return ids.numpy(), positions.numpy()


def test_the_sample_holds_the_batch_ids_and_random_others_and_maps_the_targets_into_it():
    ids, positions = _sample(TARGETS, 12)
    assert len(ids) == 12 and np.all(np.diff(ids) > 0)  # sorted, distinct
    assert set(TARGETS.ravel()) <= set(ids) and ids[0] == 0  # every target id, and pad first
    np.testing.assert_array_equal(ids[positions], TARGETS)  # the positions name the same ids
    assert np.all((positions == 0) == (TARGETS == 0))  # pad stays 0: the loss' mask is unchanged
    again, _ = _sample(TARGETS, 12)
    other, _ = _sample(TARGETS, 12, seed=(0, 2))
    np.testing.assert_array_equal(ids, again)  # the seed decides the fill
    assert not np.array_equal(ids, other)


def test_a_batch_with_more_ids_than_the_size_keeps_them_all():
    ids, positions = _sample(TARGETS, 3)
    assert sorted(ids) == sorted(set(TARGETS.ravel()))
    np.testing.assert_array_equal(ids[positions], TARGETS)


def test_random_fills_cover_the_vocabulary_uniformly():
    counts = np.zeros(50)
    for step in range(400):
        counts[_sample(TARGETS, 20, seed=(3, step))[0]] += 1
    others = np.delete(counts, sorted(set(TARGETS.ravel())))  # 43 ids share the 13 other places
    assert others.mean() == pytest.approx(400 * 13 / 43, rel=0.02) and others.min() > 0.6 * others.mean()


def test_the_dataset_gets_the_ids_as_a_third_input_and_refuses_a_size_of_the_whole_vocabulary():
    source = tf.ones((3, 4), tf.int32)
    dataset = tf.data.Dataset.from_tensors(((source, tf.constant(TARGETS)), tf.constant(TARGETS)))
    (x_source, _, rows), positions = next(iter(with_sampled_vocabulary(dataset, 50, 12)))
    assert rows.shape == (3, 12) and np.all(rows.numpy() == rows.numpy()[0])
    np.testing.assert_array_equal(rows.numpy()[0][positions.numpy()], TARGETS)
    assert with_sampled_vocabulary(dataset, 50, 0) is dataset
    with pytest.raises(ValueError, match="sampled_vocabulary=50: expected 0 .* fewer than the 50 target ids"):
        with_sampled_vocabulary(dataset, 50, 50)


@pytest.mark.parametrize("preset,fields", [("dates_luong_general", dict(tie_embeddings=True)),
                                           ("dates_luong_general", dict(tie_embeddings=False)),
                                           ("dates_bahdanau", {})])
def test_the_sampled_logits_are_the_whole_vocabulary_logits_at_those_ids(preset, fields):
    config = load_config(preset)
    config.update(embedding_dim=8, encoder_units=8, decoder_units=16, attention_units=8, output_units=8, **fields)
    model = build_model(config, 30, 50)
    source, target_in = tf.constant([[4, 5, 6], [7, 8, 0]]), tf.constant([[1, 9, 3, 11], [1, 12, 0, 0]])
    ids = tf.constant([0, 2, 3, 9, 17, 49])
    whole = model((source, target_in)).numpy()
    with tf.GradientTape() as tape:
        sampled = model((source, target_in, tf.tile(ids[None], [2, 1])))
        loss = tf.reduce_sum(sampled * tf.random.stateless_normal(tf.shape(sampled), (0, 4)))
    assert sampled.shape == (2, 4, 6) and sampled.dtype == tf.float32
    np.testing.assert_allclose(sampled.numpy(), whole[..., ids.numpy()], rtol=1e-5, atol=1e-5)
    grads = dict(zip([w.path for w in model.trainable_weights], tape.gradient(loss, model.trainable_weights)))
    embedding = tf.convert_to_tensor(grads[model.target_embedding.embeddings.path]).numpy()
    assert np.abs(embedding[[1, 9, 3, 11, 12]]).sum() > 0  # the inputs' rows
    if fields.get("tie_embeddings"):  # the projection's rows are the embedding's: only the sampled ones move
        untouched = sorted(set(range(50)) - set(ids.numpy()) - {1, 9, 3, 11, 12})
        assert np.abs(embedding[ids.numpy()]).sum() > 0 and np.abs(embedding[untouched]).sum() == 0


def test_a_run_trains_over_a_sampled_vocabulary_and_a_bad_combination_is_refused(tmp_path):
    config = load_config("dates_luong_general")
    config.update(dates_train_size=600, dates_dev_size=24, embedding_dim=16, encoder_units=16, decoder_units=32,
                  attention_units=16, batch_size=32, learning_rate=1e-2, final_beam_width=1, verbose=0,
                  num_epochs=2, early_stopping_patience=0, export=False, sampled_vocabulary=8)
    lines = []
    results = train_and_evaluate(config, str(tmp_path / "run"), print_fn=lines.append)
    assert results["train_steps"] > 0 and np.isfinite(results["bleu"])
    data_line = next(line for line in lines if line.startswith("  data:"))
    assert data_line.endswith("target tokens; each batch's softmax over >= 8 of them (sampled_vocabulary)"), data_line
    assert config_problems(config) == []
    config.label_smoothing = 0.1
    assert any(p.startswith("label_smoothing=0.1 (expected 0 with sampled_vocabulary=8") for p in config_problems(config))
    config.label_smoothing, config.sampled_vocabulary = 0.0, -1
    assert any(p.startswith("sampled_vocabulary=-1") for p in config_problems(config))
