"""Recipe fields reach the model and the data: one home of defaults, choices, resume fields."""

import os

import pytest

import zoo.models
from recipes import load_config
from recipes.configs import base
from zoo.layers import ConcatAttention
from zoo.training.trainer import build_model, check_config, validate_config, write_config

TINY = dict(embedding_dim=8, encoder_units=6, decoder_units=12, attention_units=5, attention_rank=3, output_units=4)


def test_the_base_recipe_builds_every_preset_as_the_catalog_does():
    config = base.get_config()
    for name in zoo.models.presets():
        preset = zoo.models.get_preset(name)
        assert dict(preset.defaults, **zoo.models.recipe_overrides(name, config)) == preset.defaults, name


def test_attention_decoder_layers_and_input_feeding_come_from_the_recipe():
    config = load_config("dates_luong_dot")
    config.update(TINY, attention="concat", decoder_layers=2, input_feeding=False)
    validate_config(config)
    model = build_model(config, 20, 15)
    assert isinstance(model.attention, ConcatAttention) and model.attention.units == 5
    assert (model.decoder_layers, model.input_feeding, model.decoder_units) == (2, False, 12)
    config.update(attention=None, decoder_layers=None, input_feeding=None)  # the preset's own
    model = build_model(config, 20, 15)
    assert (model.attention_type, model.decoder_layers, model.input_feeding) == ("dot", 1, True)


def test_bad_model_choices_fail_before_any_data_is_read():
    config = load_config("dates_luong_general")
    config.attention = "luong"
    with pytest.raises(ValueError, match=r"^invalid config: attention='luong' \(expected None \(the preset's\) or one of \[.*'reduced_rank'\]\)$"):
        validate_config(config)
    config = load_config("dates_bahdanau")
    config.input_feeding = False
    with pytest.raises(ValueError, match=r"input_feeding=False does not apply to preset 'bahdanau'"):
        validate_config(config)
    config = load_config("dates_luong_general")
    config.decoder_layers = 0
    with pytest.raises(ValueError, match=r"decoder_layers must be an int >= 1, received 0"):
        validate_config(config)


def test_resume_refuses_other_data_or_model_choices(tmp_path):
    workdir = str(tmp_path)
    check_config(load_config("dates_luong_general"), workdir)
    assert os.listdir(workdir) == []  # config.json is written once the run is past every check
    write_config(load_config("dates_luong_general"), workdir)
    os.makedirs(os.path.join(workdir, "vocab"))
    check_config(load_config("dates_luong_general"), workdir)  # the same config resumes
    for field, value, change in (
        ("dates_seed", 1, "dates_seed: 0 -> 1"),
        ("dates_languages", "en", "dates_languages: 'en,fr,es,de,it,pt' -> 'en'"),
        ("attention", "dot", "attention: None -> 'dot'"),
        ("dataset", "tsv", "dataset: 'dates' -> 'tsv'"),
        ("shared_vocab", True, "shared_vocab: False -> True"),
        ("spm_model_type", "bpe", "spm_model_type: 'unigram' -> 'bpe'"),
        ("spm_byte_fallback", False, "spm_byte_fallback: True -> False"),
        ("spm_normalization", "nfc", "spm_normalization: 'nmt_nfkc' -> 'nfc'"),
    ):
        config = load_config("dates_luong_general")
        config[field] = value
        with pytest.raises(ValueError, match=f"another model or data \\({change}\\)"):
            check_config(config, workdir)
    config = load_config("dates_luong_general")
    config.update(max_bad_fraction=0.5, train_steps=3, batch_tokens=500)  # neither fixes the data nor the model
    check_config(config, workdir)
