"""The SavedModel export: text in, text out, core TensorFlow ops only.

`Translator` is a `tf.Module` that holds a zoo model's variables, the source and target
tokenizers (their lookup tables) and the decoders of `zoo.decoding`; its four
`tf.function`s are the serving signatures of docs/contract.md ("The SavedModel"):

| signature | inputs | outputs |
|---|---|---|
| `serving_default` | `source` string (B) | `translation` string (B), `score` float32 (B) |
| `greedy` | `source` string (B) | `translation` string (B), `score` float32 (B) |
| `beam_search` | `source` (B), `beam_width` int32 (), `num_hypotheses` int32 (), `length_penalty` float32 () | `translations` (B, N), `scores` (B, N), `log_probs` (B, N), `attention` (B, T_tgt, T_src), `source_tokens` (B, T_src), `target_tokens` (B, T_tgt) |
| `score` | `source` (B), `target` (B) | `log_prob` float32 (B) |

Inputs are never rejected for their content: a source is normalized and tokenized in
the graph, cut to its first `max_source_length` tokens (documented truncation, so a
huge input costs no more than a maximal one), and an empty source decodes from an
all-padding row (the model attends to nothing and still answers). `beam_width` is
clamped to [1, `max_beam_width`], `num_hypotheses` to [1, beam_width], and a
non-finite `length_penalty` falls back to the export's default.

`export_saved_model` writes `export_dir/<version>/` atomically (a hidden temporary
directory renamed into place, so a server polling `export_dir` never loads half a
version), with the vocabularies in `assets/`, export settings in
`assets.extra/zoo_export.json` and TF Serving warmup requests in
`assets.extra/tf_serving_warmup_requests`.
"""

import json
import os
import re
import shutil
import tempfile

import keras
import ml_collections
import tensorflow as tf

import zoo.models  # noqa: F401  registers the zoo's Keras classes for `load_model`
from zoo.data import load_tokenizer
from zoo.data.vocabulary import EOS_ID, PAD_ID
from zoo.decoding import beam_search, greedy_search, sequence_log_prob
from zoo.decoding.constraints import MAX_LENGTH_FACTOR, MAX_LENGTH_OFFSET
from zoo.export import warmup

DEFAULT_BEAM_WIDTH = 5
DEFAULT_LENGTH_PENALTY = 0.6
DEFAULT_MAX_SOURCE_LENGTH = 200  # when neither the caller nor the training config gives one
DEFAULT_MAX_BEAM_WIDTH = 64
SIGNATURES = ("serving_default", "greedy", "beam_search", "score")
SETTINGS_FILE = "zoo_export.json"  # in assets.extra/: the defaults baked into the export

_VERSION_DIR = re.compile(r"[0-9]+")
_SOURCE = tf.TensorSpec([None], tf.string, name="source")
_TARGET = tf.TensorSpec([None], tf.string, name="target")


class _Untracked:
    """Holds the Keras model out of `tf.Module`'s sight: only its variables are saved."""

    def __init__(self, model):
        self.model = model


class Translator(tf.Module):
    """A zoo model with its tokenizers and decoders, as the serving signatures.

    Args:
      model: a built zoo `Seq2Seq` model (`encode`/`step`, docs/interfaces.md).
      source_tokenizer, target_tokenizer: `zoo.data` tokenizers (in-graph `encode`,
        `tokenize`, `decode`, `id_to_token`).
      beam_width: beam width of `serving_default`.
      length_penalty: GNMT length penalty alpha of `serving_default`, and of the
        `score` that `greedy` reports (so greedy and beam scores compare).
      coverage_penalty: GNMT coverage penalty beta of every search (0: none).
      max_source_length: sources are cut to their first `max_source_length` tokens.
      max_beam_width: `beam_search`'s `beam_width` is clamped to this (memory bound).
      name: module name.

    Every signature is a `tf.function` with an explicit input signature; call them on
    the object (`translator.beam_search(source, 4, 2, 0.6)`) or save with
    `tf.saved_model.save(translator, path, signatures=translator.signatures())`.
    Outputs are per sentence: a sentence translates the same alone or in any batch.
    """

    def __init__(
        self,
        model,
        source_tokenizer,
        target_tokenizer,
        beam_width=DEFAULT_BEAM_WIDTH,
        length_penalty=DEFAULT_LENGTH_PENALTY,
        coverage_penalty=0.0,
        max_source_length=DEFAULT_MAX_SOURCE_LENGTH,
        max_beam_width=DEFAULT_MAX_BEAM_WIDTH,
        name="translator",
    ):
        super().__init__(name=name)
        for field, value, lowest in (
            ("beam_width", beam_width, 1),
            ("max_source_length", max_source_length, 1),
            ("max_beam_width", max_beam_width, 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
                raise ValueError(f"Translator: {field} must be an int >= {lowest}, received {value!r}.")
        if beam_width > max_beam_width:
            raise ValueError(
                f"Translator: beam_width must be <= max_beam_width={max_beam_width}, received {beam_width}."
            )
        if coverage_penalty < 0:
            raise ValueError(f"Translator: coverage_penalty must be >= 0, received {coverage_penalty}.")
        for side, tokenizer, size in (
            ("source", source_tokenizer, model.source_vocab_size),
            ("target", target_tokenizer, model.target_vocab_size),
        ):
            if tokenizer.vocab_size != size:
                raise ValueError(
                    f"Translator: the {side} tokenizer has {tokenizer.vocab_size} tokens but the "
                    f"model expects a {side} vocabulary of {size}."
                )
        self._keras = _Untracked(model)
        # The variables (not the Keras objects) are what the SavedModel stores and restores.
        self.model_variables = [variable.value for variable in model.variables]
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.beam_width = beam_width
        self.length_penalty = float(length_penalty)
        self.coverage_penalty = float(coverage_penalty)
        self.max_source_length = max_source_length
        self.max_beam_width = max_beam_width
        # The longest hypothesis a search can produce; `score` cuts targets there too.
        self.max_target_length = MAX_LENGTH_FACTOR * max_source_length + MAX_LENGTH_OFFSET

    @property
    def model(self):
        return self._keras.model

    def settings(self):
        """The export-time defaults, as written to `assets.extra/zoo_export.json`."""
        return {
            "beam_width": self.beam_width,
            "length_penalty": self.length_penalty,
            "coverage_penalty": self.coverage_penalty,
            "max_source_length": self.max_source_length,
            "max_target_length": self.max_target_length,
            "max_beam_width": self.max_beam_width,
            "source_vocab_size": self.source_tokenizer.vocab_size,
            "target_vocab_size": self.target_tokenizer.vocab_size,
            "model": type(self.model).__name__,
            "model_name": self.model.name,
            "signatures": list(SIGNATURES),
        }

    def signatures(self):
        """`{name: tf.function}` for `tf.saved_model.save(..., signatures=...)`."""
        return {name: getattr(self, name) for name in SIGNATURES}

    # -- the signatures --------------------------------------------------------------------

    @tf.function(input_signature=[_SOURCE])
    def serving_default(self, source):
        """Beam search with the export's defaults: `translation` (B,), `score` (B,)."""
        source_ids = self._source_ids(source)
        result = beam_search(
            self.model,
            source_ids,
            beam_width=self.beam_width,
            num_hypotheses=1,
            length_penalty=self.length_penalty,
            coverage_penalty=self.coverage_penalty,
        )
        return {"translation": self._texts(result.ids)[:, 0], "score": result.scores[:, 0]}

    @tf.function(input_signature=[_SOURCE])
    def greedy(self, source):
        """Greedy search: `translation` (B,), `score` (B,) ranked like beam search."""
        source_ids = self._source_ids(source)
        result = greedy_search(
            self.model,
            source_ids,
            length_penalty=self.length_penalty,
            coverage_penalty=self.coverage_penalty,
        )
        return {"translation": self._texts(result.ids)[:, 0], "score": result.scores[:, 0]}

    @tf.function(
        input_signature=[
            _SOURCE,
            tf.TensorSpec([], tf.int32, name="beam_width"),
            tf.TensorSpec([], tf.int32, name="num_hypotheses"),
            tf.TensorSpec([], tf.float32, name="length_penalty"),
        ]
    )
    def beam_search(self, source, beam_width, num_hypotheses, length_penalty):
        """The `num_hypotheses` best translations, their scores and the best one's attention.

        Returns:
          `translations` string (B, N), `scores` float32 (B, N) (length-normalized,
          descending), `log_probs` float32 (B, N) (plain sums, end token included),
          `attention` float32 (B, T_tgt, T_src) of the best hypothesis (one row per
          target token, end token included; zero rows past its end), `source_tokens`
          string (B, T_src) (after truncation, padded with ""), `target_tokens` string
          (B, T_tgt) of the best hypothesis (ending with "</s>", padded with "").
        """
        beam_width = tf.clip_by_value(beam_width, 1, self.max_beam_width)
        num_hypotheses = tf.clip_by_value(num_hypotheses, 1, beam_width)
        length_penalty = tf.where(
            tf.math.is_finite(length_penalty), length_penalty, tf.constant(self.length_penalty)
        )
        source_ids = self._source_ids(source)  # (B, S)
        result = beam_search(
            self.model,
            source_ids,
            beam_width=beam_width,
            num_hypotheses=num_hypotheses,
            length_penalty=length_penalty,
            coverage_penalty=self.coverage_penalty,
        )
        best_length = result.lengths[:, 0]  # (B,)
        target_length = tf.reduce_max(tf.concat([best_length, [0]], axis=0))
        best_ids = result.ids[:, 0, :target_length]  # (B, T_tgt)
        inside = tf.range(target_length)[None, :] < best_length[:, None]
        target_tokens = tf.where(inside, self.target_tokenizer.id_to_token(best_ids), "")
        source_tokens = self.source_tokenizer.tokenize(source)[:, : self.max_source_length]
        source_tokens = source_tokens.to_tensor(default_value="", shape=tf.shape(source_ids))
        return {
            "translations": self._texts(result.ids),
            "scores": result.scores,
            "log_probs": result.log_probs,
            "attention": result.attention[:, 0, :target_length, :],
            "source_tokens": source_tokens,
            "target_tokens": target_tokens,
        }

    @tf.function(input_signature=[_SOURCE, _TARGET])
    def score(self, source, target):
        """`log_prob` float32 (B,): log p(target | source), end token included.

        Equals the `log_probs` that `beam_search` reports for the same hypothesis.
        Targets are cut to `max_target_length` tokens, the longest any search produces.
        """
        tf.debugging.assert_equal(
            tf.shape(source),
            tf.shape(target),
            message="score: expected as many targets as sources (source and target batch sizes differ)",
        )
        source_ids = self._source_ids(source)
        target_ids = self.target_tokenizer.encode(target)[:, : self.max_target_length]
        return {"log_prob": sequence_log_prob(self.model, source_ids, target_ids.to_tensor(PAD_ID))}

    # -- text <-> ids ----------------------------------------------------------------------

    def _source_ids(self, source):
        """string (B,) -> int32 (B, S), S >= 1: truncated ids padded with PAD_ID.

        The width is at least 1 so that a batch of empty sources is an all-padding row
        (the encoder masks it) rather than a zero-length sequence.
        """
        ids = self.source_tokenizer.encode(source)[:, : self.max_source_length]
        ids = ids.to_tensor(default_value=PAD_ID)
        return tf.pad(ids, [[0, 0], [0, tf.maximum(1 - tf.shape(ids)[1], 0)]])

    def _texts(self, ids):
        """int32 (B, N, T) -> string (B, N): each hypothesis detokenized up to its end token."""
        shape = tf.shape(ids)
        texts = self.target_tokenizer.decode(tf.reshape(ids, [-1, shape[2]]))
        return tf.reshape(texts, shape[:2])


# -- writing exports -----------------------------------------------------------------------


def existing_versions(export_dir):
    """Sorted int versions of the complete SavedModels under `export_dir` ([] if none)."""
    if not os.path.isdir(export_dir):
        return []
    return sorted(
        int(name)
        for name in os.listdir(export_dir)
        if _VERSION_DIR.fullmatch(name) and os.path.isfile(os.path.join(export_dir, name, "saved_model.pb"))
    )


def export_saved_model(
    model,
    source_tokenizer,
    target_tokenizer,
    export_dir,
    version=None,
    *,
    beam_width=DEFAULT_BEAM_WIDTH,
    length_penalty=DEFAULT_LENGTH_PENALTY,
    coverage_penalty=0.0,
    max_source_length=DEFAULT_MAX_SOURCE_LENGTH,
    max_beam_width=DEFAULT_MAX_BEAM_WIDTH,
    warmup_sources=None,
):
    """Writes `export_dir/<version>/`, a SavedModel TF Serving loads as it is.

    Args:
      model, source_tokenizer, target_tokenizer: see `Translator`.
      export_dir: the model base path (TF Serving's `--model_base_path`).
      version: positive int; None for one more than the newest version there (or 1).
      beam_width, length_penalty, coverage_penalty, max_source_length, max_beam_width:
        see `Translator`.
      warmup_sources: a few source sentences for the warmup requests; None builds
        them from the source vocabulary.

    Returns:
      The path of the new version directory.

    Raises:
      FileExistsError: `export_dir/<version>` exists (a served version is never replaced).
    """
    if version is None:
        version = (existing_versions(export_dir) or [0])[-1] + 1
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"version must be a positive int, received {version!r}.")
    final_dir = os.path.join(export_dir, str(version))
    if os.path.exists(final_dir):
        raise FileExistsError(f"{final_dir} exists: choose another version or remove it first")
    translator = Translator(
        model,
        source_tokenizer,
        target_tokenizer,
        beam_width=beam_width,
        length_penalty=length_penalty,
        coverage_penalty=coverage_penalty,
        max_source_length=max_source_length,
        max_beam_width=max_beam_width,
    )
    os.makedirs(export_dir, exist_ok=True)
    # Hidden and non-numeric: TF Serving and zoo-serve ignore it until the rename.
    temp_dir = os.path.join(export_dir, f".tmp-{version}-{os.getpid()}")
    shutil.rmtree(temp_dir, ignore_errors=True)
    try:
        with tempfile.TemporaryDirectory() as vocab_dir:
            translator.source_vocabulary = _vocabulary_asset(source_tokenizer, vocab_dir, "source_vocab.txt")
            translator.target_vocabulary = _vocabulary_asset(target_tokenizer, vocab_dir, "target_vocab.txt")
            tf.saved_model.save(translator, temp_dir, signatures=translator.signatures())
        extra_dir = os.path.join(temp_dir, "assets.extra")
        os.makedirs(extra_dir, exist_ok=True)
        with open(os.path.join(extra_dir, SETTINGS_FILE), "w", encoding="utf-8") as f:
            json.dump(translator.settings(), f, indent=2)
            f.write("\n")
        if warmup_sources is None:
            warmup_sources = warmup.sources_from_vocabulary(source_tokenizer)
        warmup.write_warmup_requests(
            temp_dir, warmup_sources, beam_width=beam_width, length_penalty=length_penalty
        )
        os.rename(temp_dir, final_dir)
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    return final_dir


def _vocabulary_asset(tokenizer, directory, filename):
    """The vocabulary (one token per line, in id order) as a SavedModel asset file."""
    path = os.path.join(directory, filename)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(tokenizer.vocab) + "\n")
    return tf.saved_model.Asset(path)


# -- training workdirs ---------------------------------------------------------------------


def load_workdir(workdir):
    """Reads a `zoo-train` workdir (docs/interfaces.md).

    Returns:
      `(model, source_tokenizer, target_tokenizer, config)`: the Keras model of
      `best.keras`, the tokenizers of `vocab/source` and `vocab/target`, and
      `config.json` as an `ml_collections.ConfigDict` (empty if the file is missing).
    """
    model_path = os.path.join(workdir, "best.keras")
    if not os.path.isdir(workdir):
        raise FileNotFoundError(f"{workdir}: no such directory (expected a zoo-train workdir)")
    if not os.path.isfile(model_path):
        raise FileNotFoundError(f"{model_path}: no such file (a workdir holds best.keras once training saved one)")
    config = {}
    config_path = os.path.join(workdir, "config.json")
    if os.path.isfile(config_path):
        with open(config_path, encoding="utf-8") as f:
            try:
                config = json.load(f)
            except json.JSONDecodeError as error:
                raise ValueError(f"{config_path}: invalid JSON: {error}") from None
    source_tokenizer = load_tokenizer(os.path.join(workdir, "vocab", "source"))
    target_tokenizer = load_tokenizer(os.path.join(workdir, "vocab", "target"))
    model = keras.saving.load_model(model_path, compile=False)
    return model, source_tokenizer, target_tokenizer, ml_collections.ConfigDict(config)


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


def translator_settings(config, **overrides):
    """`Translator` keyword arguments from a training config, `overrides` winning."""
    settings = {}
    for key, names in (
        ("beam_width", ("beam_width", "final_beam_width")),  # the recipes' final dev decoding
        ("length_penalty", ("length_penalty",)),
        ("coverage_penalty", ("coverage_penalty",)),
        ("max_source_length", ("max_source_length",)),
    ):
        value = next((v for v in (find_setting(config, name) for name in names) if v is not None), None)
        if value is not None:
            settings[key] = value
    settings.update({key: value for key, value in overrides.items() if value is not None})
    return settings


def export_workdir(workdir, export_dir=None, version=None, warmup_sources=None, **overrides):
    """Exports a workdir's `best.keras` to `export_dir/<version>` (default `workdir/export`).

    Decoding defaults come from `config.json` (`beam_width` or else `final_beam_width`,
    `length_penalty`, `coverage_penalty`, `max_source_length`, at any depth) unless given
    in `overrides`.

    Returns:
      The path of the new version directory.
    """
    model, source_tokenizer, target_tokenizer, config = load_workdir(workdir)
    return export_saved_model(
        model,
        source_tokenizer,
        target_tokenizer,
        os.path.join(workdir, "export") if export_dir is None else export_dir,
        version,
        warmup_sources=warmup_sources,
        **translator_settings(config, **overrides),
    )
