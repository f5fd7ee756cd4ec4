"""Every preset learns the `dates` task in a short run with a tiny config."""

import keras
import pytest

import zoo.models
from recipes import load_config
from zoo.data import dates_splits
from zoo.training.trainer import build_model, build_tokenizers, compile_model, make_train_dataset


@pytest.fixture(scope="module")
def dates_data(tmp_path_factory):
    pairs = dates_splits(seed=1, train=480, dev=1, test=1)["train"]
    config = load_config("dates_bahdanau")
    tokenizers = build_tokenizers(config, pairs, str(tmp_path_factory.mktemp("vocab")))
    return pairs, tokenizers


@pytest.mark.slow  # tracing a training step takes ~10 s per model on 2 cores
@pytest.mark.parametrize("preset", zoo.models.presets())
def test_preset_learns_dates(preset, dates_data):
    pairs, (source_tokenizer, target_tokenizer) = dates_data
    config = load_config("dates_bahdanau")
    config.update(model=preset, embedding_dim=16, encoder_units=16, decoder_units=32, attention_units=16,
                  attention_rank=8, output_units=16, batch_size=32, learning_rate=1e-2, warmup_steps=5)
    keras.utils.set_random_seed(0)
    model = compile_model(build_model(config, source_tokenizer.vocab_size, target_tokenizer.vocab_size), config)
    dataset = make_train_dataset(config, pairs, source_tokenizer, target_tokenizer, seed=0)
    history = model.fit(dataset, epochs=4, verbose=0).history
    assert history["loss"][-1] < 0.7 * history["loss"][0], history
    # Chance is 1 / 15 target tokens; the masked accuracy only counts real tokens.
    assert history["accuracy"][-1] > 3 / target_tokenizer.vocab_size, history
