"""The recipes: every one loads, overrides apply, every field is commented."""

import os
import re

import ml_collections
import pytest

import recipes
from recipes.configs import base

CONFIG_DIR = os.path.dirname(base.__file__)


def test_the_required_recipes_exist():
    expected = {"dates_bahdanau", "dates_rnnenc", "dates_luong_dot", "dates_luong_general", "dates_luong_concat",
                "dates_reduced_rank", "text", "ted_hrlr_pt_en", "wmt14_de_en"}
    assert expected <= set(recipes.recipe_names())
    assert recipes.get_config().recipe == "dates_bahdanau"  # the default


@pytest.mark.parametrize("name", recipes.recipe_names())
def test_recipe_has_every_base_field_with_its_type(name):
    config = recipes.load_config(name)
    defaults = base.get_config()
    assert isinstance(config, ml_collections.ConfigDict)
    assert config.recipe == name
    assert set(config.keys()) == set(defaults.keys())  # recipes change values, never add fields
    for key in defaults.keys():
        if defaults[key] is None:  # a placeholder: None (the preset's own choice) or a value of its type
            assert config[key] is None or type(config[key]) is defaults.get_ref(key).get_type(), key
        else:
            assert type(config[key]) is type(defaults[key]), key
    if name.startswith("dates_"):
        assert config.model == name[len("dates_"):] and config.bleu_tokenize == "char"
    if config.model == "luong_dot":
        assert config.decoder_units == 2 * config.encoder_units  # the dot score's requirement


@pytest.mark.parametrize("filename", sorted(f for f in os.listdir(CONFIG_DIR) if f.endswith(".py") and f[0] != "_"))
def test_every_field_assignment_has_a_comment(filename):
    with open(os.path.join(CONFIG_DIR, filename), encoding="utf-8") as f:
        assignments = [line for line in f if re.match(r"\s+config\.\w+ = ", line)]
    assert assignments, filename
    uncommented = [line.strip() for line in assignments if "  # " not in line]
    assert not uncommented, uncommented


def test_a_config_file_path_is_a_recipe(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "from recipes.configs import dates_bahdanau\n\n"
        "def get_config():\n"
        "    config = dates_bahdanau.get_config()\n"
        "    config.recipe = 'mine'\n"
        "    return config\n"
    )
    assert recipes.load_config(str(path)).recipe == "mine"
    with pytest.raises(ValueError, match="no such file"):
        recipes.load_config(str(tmp_path / "missing.py"))
    (tmp_path / "empty.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match="expected a module with get_config"):
        recipes.load_config(str(tmp_path / "empty.py"))


def test_unknown_recipe_names_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown recipe 'nope'; expected one of \[.*'text'"):
        recipes.load_config("nope")
