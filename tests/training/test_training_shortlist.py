"""zoo-train's vocabulary selection: `shortlist_k` learns vocab/shortlist.npz and the export decodes with it."""

import os

import numpy as np
from test_trainer import tiny_config

from recipes import train_and_export
from zoo.constants import read_export_settings
from zoo.data import CharTokenizer, ShortlistTable
from zoo.training.inputs import build_shortlist
from zoo.config_checks import config_problems

PAIRS = [("3 mars", "03-03"), ("4 avril", "04-04"), ("12 mai", "05-12")]


def test_the_table_is_learned_once_and_again_when_its_settings_change(tmp_path):
    tokenizers = (CharTokenizer.build([s for s, _ in PAIRS]), CharTokenizer.build([t for _, t in PAIRS]))
    config = tiny_config(shortlist_k=2, shortlist_frequent=3)
    table, learned = build_shortlist(config, PAIRS, tokenizers, str(tmp_path))
    assert learned and table.settings() == {"k": 2, "frequent": 3}
    assert table.rows.shape == (tokenizers[0].vocab_size, 2)
    np.testing.assert_array_equal(ShortlistTable.load(tmp_path / "shortlist.npz").rows, table.rows)
    assert build_shortlist(config, PAIRS, tokenizers, str(tmp_path))[1] is False  # a rerun reads it
    config.shortlist_frequent = 1
    table, learned = build_shortlist(config, PAIRS, tokenizers, str(tmp_path))
    assert learned and ShortlistTable.load(tmp_path / "shortlist.npz").settings() == {"k": 2, "frequent": 1}
    assert build_shortlist(tiny_config(), PAIRS, tokenizers, str(tmp_path / "off")) == (None, False)
    assert not os.path.exists(tmp_path / "off")
    assert config_problems(tiny_config(shortlist_k=-1)) == ["shortlist_k=-1 (expected >= 0)"]


def test_a_recipe_with_shortlist_k_exports_with_its_table(tmp_path):
    workdir = str(tmp_path / "run")
    lines = []
    results = train_and_export(tiny_config(num_epochs=1, shortlist_k=3, shortlist_frequent=5), workdir,
                               print_fn=lines.append)
    assert os.path.isfile(os.path.join(workdir, "vocab", "shortlist.npz"))
    assert any("shortlist: k=3 target tokens per source token and 5 frequent ones" in line for line in lines)
    assert read_export_settings(results["export_path"])["shortlist"] == {"k": 3, "frequent": 5}

