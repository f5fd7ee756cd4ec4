"""Reading a `zoo-train` workdir: the best model, its tokenizers, its config and decoding settings.

Both `zoo.inference` (translating a workdir that has no export yet) and `zoo.export`
(`zoo-export`) read workdirs; this module sits below both so that neither imports the other.
The layout is the one of docs/interfaces.md ("A training workdir").
"""

import os
import zipfile

import keras
import ml_collections

from zoo import constants
from zoo.data import load_tokenizer
from zoo.data.shortlist import ShortlistTable

# Decoding settings and the config fields they are read from, the first one set winning.
# A recipe's `final_beam_width` (its final dev decoding) stands in for a `beam_width`.
_DECODING_FIELDS = (
    ("beam_width", ("beam_width", "final_beam_width")),
    ("length_penalty", ("length_penalty",)),
    ("coverage_penalty", ("coverage_penalty",)),
    ("beam_stopping", ("beam_stopping",)),
)


def read_config(workdir):
    """`workdir/config.json` as an `ml_collections.ConfigDict` (empty if the file is missing)."""
    config_path = os.path.join(workdir, constants.CONFIG_FILE)
    config = constants.read_json_object(config_path) if os.path.isfile(config_path) else {}
    return ml_collections.ConfigDict(config)


def load_workdir(workdir):
    """Reads a `zoo-train` workdir (docs/interfaces.md).

    Returns:
      `(model, source_tokenizer, target_tokenizer, config)`: the Keras model of
      `best.keras`, the tokenizers of `vocab/source` and `vocab/target`, and
      `config.json` as an `ml_collections.ConfigDict` (empty if the file is missing).

    Raises:
      FileNotFoundError: `workdir` is not a directory or holds no `best.keras`.
      ValueError: `best.keras` is not a whole `.keras` archive.
    """
    model_path = os.path.join(workdir, constants.BEST_MODEL_FILE)
    if not os.path.isdir(workdir):
        raise FileNotFoundError(f"{workdir}: no such directory (expected a zoo-train workdir)")
    if not os.path.isfile(model_path):
        raise FileNotFoundError(f"{model_path}: no such file (a workdir holds best.keras once training saved one)")
    config = read_config(workdir)
    source_tokenizer = load_tokenizer(os.path.join(workdir, constants.VOCAB_DIR, "source"))
    target_tokenizer = load_tokenizer(os.path.join(workdir, constants.VOCAB_DIR, "target"))
    if not zipfile.is_zipfile(model_path):  # Keras would call a truncated file "File not found"
        raise ValueError(f"{model_path}: not a .keras archive (truncated or corrupt); retrain, or copy it again")
    try:
        model = keras.saving.load_model(model_path, compile=False)
    except (zipfile.BadZipFile, EOFError, KeyError, OSError) as error:  # OSError: h5py on cut weights
        raise ValueError(f"{model_path}: a damaged .keras archive ({error})") from error
    return model, source_tokenizer, target_tokenizer, config


def find_setting(config, key):
    """The value of `key` anywhere in a nested config (the shallowest first), or None."""
    if hasattr(config, "to_dict"):
        config = config.to_dict()
    level = [config]
    while level:
        for node in level:
            if isinstance(node, dict) and node.get(key) is not None:
                return node[key]
        level = [value for node in level if isinstance(node, dict) for value in node.values()]
    return None


def decoding_settings(config, **overrides):
    """The decoding settings a training config gives, `overrides` (when not None) winning.

    Returns:
      dict with those of `beam_width`, `length_penalty`, `coverage_penalty` and
      `beam_stopping` that are set (at any depth of the config), `max_source_length`
      (`source_cap(config)`), and `max_target_length` (the config's plus one, the end token)
      when the config cut its targets; the keyword arguments of `zoo.export.ServingModule`
      (the export's defaults).
    """
    settings = {}
    for key, names in _DECODING_FIELDS:
        value = next((v for v in (find_setting(config, name) for name in names) if v is not None), None)
        if value is not None:
            settings[key] = value
    settings["max_source_length"] = source_cap(config)
    trained = find_setting(config, "max_target_length")  # targets were cut to N tokens before </s>
    if trained:
        settings["max_target_length"] = int(trained) + 1  # the searches' cap, as the dev decoding in training
    settings.update({key: value for key, value in overrides.items() if value is not None})
    return settings


def source_cap(config):
    """The most source tokens a translation of this workdir's model reads: the training's
    `max_source_length`, but never fewer than `constants.DEFAULT_MAX_SOURCE_LENGTH`.

    The training cap bounds the pairs a model learns from (and 0 there means none); a sentence
    to translate is not cut there: on the Debian test set, cutting its 76 sources longer than the
    text recipe's 80 pieces cost 0.48 BLEU (docs/performance.md). The translation's own cap stays
    the training's `max_target_length` + 1 (`decoding_settings`).
    """
    trained = find_setting(config, "max_source_length")
    return max(int(trained or 0), constants.DEFAULT_MAX_SOURCE_LENGTH)


def shortlist_path(workdir):
    """`workdir/vocab/shortlist.npz`: where a workdir keeps its vocabulary selection table."""
    return os.path.join(workdir, constants.VOCAB_DIR, constants.SHORTLIST_FILE)


def workdir_shortlist(workdir, config, use=None):
    """The `ShortlistTable` a workdir's searches use, or None for the whole vocabulary.

    Args:
      workdir: a `zoo-train` workdir.
      config: its config (`read_config`).
      use: True: its table; False: none; None: the config's choice (a table when it was
        trained with `shortlist_k` > 0).

    Raises:
      FileNotFoundError: a table is asked for and the workdir has none.
    """
    if use is None:
        use = bool(find_setting(config, "shortlist_k"))
    if not use:
        return None
    path = shortlist_path(workdir)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file; a workdir has a shortlist table once zoo-train ran with "
                                "--config.shortlist_k=K (K > 0; rerunning a finished workdir adds it)")
    return ShortlistTable.load(path)
