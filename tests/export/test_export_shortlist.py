"""An export with a vocabulary selection table answers as the Keras model decoding with it."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from export_test_model import (
    BEAM_WIDTH,
    LENGTH_PENALTY,
    MAX_SOURCE_LENGTH,
    SOURCE_TEXTS,
    TARGET_TEXTS,
    TEST_SOURCES,
    as_str,
    assert_export_matches_keras,
    reference_ids,
    write_workdir,
)
from test_translate_cli import cli

from zoo.constants import read_export_settings
from zoo.data import learn_shortlist_from_texts
from zoo.decoding import Sampling, Shortlist, decode
from zoo.export import export_of_best_model, export_workdir
from zoo.inference import load_translate_fn
from zoo.models.workdir import shortlist_path

CONFIG = {"model": "bahdanau", "max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH,
          "length_penalty": LENGTH_PENALTY, "shortlist_k": 2, "shortlist_frequent": 3}


@pytest.fixture(scope="module")
def table(parts):
    """k=2, frequent=3 on the toy pairs: a sentence may produce 10 to 12 of the 14 target ids."""
    _, source_tokenizer, target_tokenizer = parts
    return learn_shortlist_from_texts(list(zip(SOURCE_TEXTS, TARGET_TEXTS)), source_tokenizer, target_tokenizer,
                                      k=2, frequent=3)


@pytest.fixture(scope="module")
def workdir(parts, table, tmp_path_factory):
    """A workdir trained with shortlist_k=2, its table in vocab/shortlist.npz, exported elsewhere."""
    workdir = write_workdir(str(tmp_path_factory.mktemp("run")), *parts, CONFIG)
    table.save(shortlist_path(workdir))
    return workdir


@pytest.fixture(scope="module")
def shortlisted(workdir, tmp_path_factory):
    """The path of the workdir's export: its config asks for the shortlist."""
    return export_workdir(workdir, export_dir=str(tmp_path_factory.mktemp("export")))


def test_every_signature_decodes_with_the_exported_table(shortlisted, parts, table, loaded):
    assert read_export_settings(shortlisted)["shortlist"] == {"k": 2, "frequent": 3}
    exported = tf.saved_model.load(shortlisted)
    shortlist = Shortlist(table)
    translations = assert_export_matches_keras(exported, parts, TEST_SOURCES, shortlist=shortlist)
    full = loaded.signatures["serving_default"](source=tf.constant(TEST_SOURCES))["translation"]
    assert translations != as_str(full), "the table should change some translation"

    model, source_tokenizer, target_tokenizer = parts
    ids = reference_ids(source_tokenizer, TEST_SOURCES)
    sample = exported.signatures["sample"](source=tf.constant(TEST_SOURCES), temperature=tf.constant(1.0),
                                           top_k=tf.constant(0), seed=tf.constant(3))
    expected = decode(model, ids, Sampling(temperature=1.0, top_k=0, seed=3), shortlist=shortlist)
    assert as_str(sample["translation"]) == as_str(target_tokenizer.decode(expected.ids[:, 0]))
    np.testing.assert_allclose(sample["log_prob"], expected.log_probs[:, 0], rtol=1e-5, atol=1e-5)

    # `score` normalizes as the searches do: it gives back their log-probabilities (of the
    # hypotheses that ended: `score` appends an end token to one cut at the length limit).
    beam = exported.signatures["beam_search"](source=tf.constant(TEST_SOURCES), beam_width=tf.constant(3),
                                              num_hypotheses=tf.constant(1), length_penalty=tf.constant(0.6))
    scored = exported.signatures["score"](source=tf.constant(TEST_SOURCES), target=beam["translations"][:, 0])
    tokens = [[t.decode() for t in row if t] for row in beam["target_tokens"].numpy()]
    ended = [row[-1] == "</s>" for row in tokens]
    assert sum(ended) >= 3
    np.testing.assert_allclose(scored["log_prob"].numpy()[ended], beam["log_probs"].numpy()[ended, 0], rtol=1e-4,
                               atol=1e-4)
    for row, source in zip(tokens, ids.numpy()):
        assert {target_tokenizer.vocab.index(t) for t in row} <= set(table.allowed(source))


def test_the_translate_function_decodes_as_the_model_was_exported_or_trained(shortlisted, export_path, workdir):
    translate, description = load_translate_fn(shortlisted)
    assert description.endswith(", shortlist k=2 frequent=3")
    sources = [text.encode() for text in TEST_SOURCES]
    exported = translate(sources)
    assert load_translate_fn(shortlisted, shortlist=True)[0](sources) == exported
    with pytest.raises(ValueError, match=r"exported with a shortlist \(\{'k': 2, 'frequent': 3\}\).*--noshortlist"):
        load_translate_fn(shortlisted, shortlist=False)
    with pytest.raises(ValueError, match="exported without a shortlist: .* zoo-export --shortlist"):
        load_translate_fn(export_path, shortlist=True)

    # A workdir without an export decodes its best.keras with its table, as its config says.
    translate, description = load_translate_fn(workdir, beam_width=BEAM_WIDTH)
    assert "shortlist k=2 frequent=3" in description and translate(sources) == exported
    assert "shortlist" not in load_translate_fn(workdir, beam_width=BEAM_WIDTH, shortlist=False)[1]


def test_a_workdir_without_a_table_says_how_to_get_one(parts, tmp_path):
    workdir = write_workdir(str(tmp_path / "run"), *parts, dict(CONFIG, shortlist_k=0))
    assert "shortlist" not in load_translate_fn(workdir)[1]
    with pytest.raises(FileNotFoundError, match=r"shortlist.npz: no such file; .*--config.shortlist_k=K"):
        load_translate_fn(workdir, shortlist=True)
    with pytest.raises(FileNotFoundError, match="shortlist.npz: no such file"):
        export_workdir(workdir, shortlist=True)


def test_a_rerun_reuses_an_export_only_with_the_shortlist_its_config_asks_for(shortlisted, workdir):
    export_dir = os.path.dirname(shortlisted)
    assert export_of_best_model(workdir, export_dir) == shortlisted
    write_config(workdir, dict(CONFIG, shortlist_k=0))
    try:
        assert export_of_best_model(workdir, export_dir) is None
    finally:
        write_config(workdir, CONFIG)


def write_config(workdir, config):
    with open(os.path.join(workdir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)


def test_the_commands_take_the_choice_as_a_flag(shortlisted, workdir, tmp_path):
    tsv = tmp_path / "test.tsv"
    tsv.write_text("".join(f"{s}\t{t}\n" for s, t in zip(SOURCE_TEXTS, TARGET_TEXTS)), encoding="utf-8")
    result = cli("recipes.evaluate", f"--model={workdir}", f"--tsv={tsv}", "--beam_width=2", "--shortlist")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert json.loads(result.stdout.decode().strip().split("\n")[-1])["decoding"].endswith(
        ", shortlist k=2 frequent=3")
    refused = cli("recipes.translate", f"--model={shortlisted}", "--noshortlist", stdin="7 mai\n")
    assert refused.returncode == 2 and b"Traceback" not in refused.stderr
    assert b"was exported with a shortlist" in refused.stderr.strip().splitlines()[-1]


def test_a_workdir_asked_for_the_other_choice_than_its_own_export_decodes_its_best_model(workdir, shortlisted,
                                                                                        tmp_path):
    # As zoo-train leaves it: the export (made with the table) inside the workdir, in export/<version>.
    inside = str(tmp_path / "run")
    shutil.copytree(workdir, inside)
    shutil.copytree(shortlisted, os.path.join(inside, "export", "1"))
    sources = [text.encode() for text in TEST_SOURCES]
    translate, description = load_translate_fn(inside, beam_width=BEAM_WIDTH, shortlist=False)  # was "pass the workdir"
    assert "best.keras" in description and "shortlist" not in description
    assert translate(sources) == load_translate_fn(workdir, beam_width=BEAM_WIDTH, shortlist=False)[0](sources)
    assert load_translate_fn(inside, shortlist=True)[1].startswith(os.path.join(inside, "export", "1"))
