"""TFDS translation datasets by name, on TFDS's mock data (nothing is downloaded)."""

import sys

import ml_collections
import pytest
import tensorflow_datasets as tfds

from recipes import load_config
from zoo.data import DataError, SentencePieceTokenizer, datasets, make_dataset
from zoo.data.tfds_pairs import import_tfds, tfds_pairs
from zoo.training import train_and_evaluate


def _expected(name, split, source_key, target_key):
    examples = tfds.as_numpy(tfds.load(name, split=split, download=False))
    pairs = [(e[source_key].decode().strip(), e[target_key].decode().strip()) for e in examples]
    return [(s, t) for s, t in pairs if s and t]


@pytest.mark.parametrize(
    "name, split, reverse, keys",
    [
        ("ted_hrlr_translate/pt_to_en", "train", False, ("pt", "en")),
        ("wmt14_translate/de-en", "validation", False, ("de", "en")),
        ("wmt14_translate/de-en", "validation", True, ("en", "de")),
    ],
)
def test_pairs_follow_the_supervised_keys(name, split, reverse, keys):
    with tfds.testing.mock_data(num_examples=12):
        pairs = list(tfds_pairs(name, split, reverse=reverse))
        expected = _expected(name, split, *keys)
    assert pairs == expected and 8 <= len(pairs) <= 12
    assert all(isinstance(s, str) and isinstance(t, str) and s and t for s, t in pairs)


def test_tfds_pipeline_on_mock_data():
    with tfds.testing.mock_data(num_examples=64):
        pairs = list(tfds_pairs("ted_hrlr_translate/pt_to_en", "train"))
    source = SentencePieceTokenizer.build([s for s, _ in pairs], max_size=280)
    target = SentencePieceTokenizer.build([t for _, t in pairs], max_size=280)
    dataset = make_dataset(pairs, source, target, 16, max_source_length=200, max_target_length=200, shuffle=False)
    decoded = []
    for (x, _), t_out in dataset:
        decoded += zip(
            [s.decode() for s in source.decode(x).numpy()], [t.decode() for t in target.decode(t_out).numpy()]
        )
    # Mock text is random letters and runs of spaces: it comes back with the spaces collapsed.
    assert sorted(decoded) == sorted((" ".join(s.split()), " ".join(t.split())) for s, t in pairs)


def test_errors_say_what_was_expected():
    with tfds.testing.mock_data(num_examples=2):
        with pytest.raises(DataError, match=r"TFDS dataset 'no_such_dataset' split 'train': Dataset no_such_dataset not found\.$"):
            list(tfds_pairs("no_such_dataset"))
        with pytest.raises(DataError, match=r"'mnist': expected a translation dataset.*got \('image', 'label'\)"):
            list(tfds_pairs("mnist"))


def test_missing_tensorflow_datasets_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", None)
    with pytest.raises(ImportError) as error:
        import_tfds()
    assert "\n" not in str(error.value) and str(error.value).endswith("pip install 'zoo-nmt[tfds]')")


def tfds_config(**fields):
    """The data fields of a recipe on dataset `tfds`."""
    config = ml_collections.ConfigDict(dict(dataset="tfds", seed=0, **datasets.config_fields()))
    config.update(dict({"tfds_name": "ted_hrlr_translate/pt_to_en"}, **fields))
    return config


def test_the_tfds_dataset_through_the_registry():
    config = tfds_config(tfds_max_train_pairs=5, tfds_reverse=True)
    with tfds.testing.mock_data(num_examples=12):
        splits = datasets.load(config)
        train = _expected("ted_hrlr_translate/pt_to_en", "train", "en", "pt")
        dev = _expected("ted_hrlr_translate/pt_to_en", "validation", "en", "pt")
    assert splits == {"train": train[:5], "dev": dev}
    assert datasets.resume_fields(config) == (
        "dataset", "tfds_name", "tfds_train_split", "tfds_reverse", "tfds_max_train_pairs")


def test_tfds_dataset_errors_are_one_line(monkeypatch):
    with pytest.raises(DataError, match=r"^dataset 'tfds' needs --config\.tfds_name, a TFDS translation dataset"):
        datasets.load(tfds_config(tfds_name=""))
    with pytest.raises(DataError, match=r"^--dev_tsv needs --train_tsv"):
        datasets.load(tfds_config(dev_tsv="dev.tsv"))
    with tfds.testing.mock_data(num_examples=2):
        with pytest.raises(DataError, match=r"^TFDS dataset 'no_such' split 'train': Dataset no_such not found\.$"):
            datasets.load(tfds_config(tfds_name="no_such"))
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", None)
    with pytest.raises(DataError, match=r"^TFDS datasets need TensorFlow Datasets.*pip install tensorflow-datasets"):
        datasets.load(tfds_config())


def test_a_recipe_trains_on_a_tfds_dataset(tmp_path):
    config = load_config("ted_hrlr_pt_en")
    config.update(
        tfds_max_train_pairs=16, source_tokenizer="char", target_tokenizer="char", max_source_length=20,
        max_target_length=20, embedding_dim=8, encoder_units=8, decoder_units=8, decoder_layers=1, batch_size=8,
        train_steps=2, num_epochs=1, final_beam_width=1, num_samples=0, verbose=0, export=False, precision="float32",
    )  # fmt: skip
    with tfds.testing.mock_data(num_examples=16):
        results = train_and_evaluate(config, str(tmp_path / "run"), print_fn=lambda line: None)
    assert results["train_steps"] == 2 and results["recipe"] == "ted_hrlr_pt_en"
    assert results["dev_sentences"] == 16 and "nrefs:1" in results["bleu_signature"]
