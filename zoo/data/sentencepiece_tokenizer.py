"""Subword tokenizer: a SentencePiece model (unigram or BPE) run in the graph by TensorFlow Text."""

import hashlib
import json
import os

import tensorflow as tf

from zoo.constants import MissingOpLibraryError, op_library_install_hint
from zoo.data import sentencepiece_model, vocabulary
from zoo.data.normalization import normalize
from zoo.data.tokenizer import CONFIG_FILE, Tokenizer

MODEL_FILE = "sentencepiece.model"


def import_tensorflow_text():
    """The `tensorflow_text` module, whose import registers the SentencePiece ops.

    Raises:
      MissingOpLibraryError: an `ImportError` with one line that names the package to install.
    """
    try:
        import tensorflow_text  # noqa: PLC0415  heavy, and only this tokenizer needs it
    except ImportError as error:
        raise MissingOpLibraryError(
            f"the sentencepiece tokenizer runs TensorFlow Text ops, which cannot be imported "
            f"({error}); install it with: {op_library_install_hint('tensorflow_text', tf.__version__)}"
        ) from None
    return tensorflow_text


class SentencePieceTokenizer(Tokenizer):
    """Subword units of a SentencePiece model: frequent words whole, rare ones in pieces.

    Encoding and decoding run in the graph (`tensorflow_text.SentencepieceTokenizer`), so a
    SavedModel holding the tokenizer needs `tensorflow` and `tensorflow_text` to load, and
    stock TF Serving runs it. Text is cleaned as by every zoo tokenizer
    (`zoo.data.normalize`), then normalized by the model's own rule (NFKC by default), so
    `decode(encode(x))` is NFKC(x) with runs of spaces collapsed (NFC(x) for a model built
    with `normalization="nfc"`); the default rule ("nmt_nfkc") also reads some invisible and
    control characters as a space (U+200B) or drops them (U+200F, U+FFFD). And a literal `▁`
    (U+2581, SentencePiece's own mark of a word's start) reads as a space, as in the char tokenizer. With byte fallback (the
    default), a character outside the vocabulary becomes its UTF-8 byte pieces, so no text
    ever encodes as `<unk>`.

    Ids 0-3 are `<pad>`, `<unk>`, `<s>`, `</s>` as in every zoo vocabulary; `tokenize` gives
    the pieces (`▁` marks the start of a word), `vocab` lists them in id order.

    Example:
      >>> tok = SentencePieceTokenizer.build(texts, max_size=8000, model_type="bpe")
      >>> tok.decode(tok.encode(["Ｈｅｌｌｏ wörld 👍"]))  # [b"Hello w\xc3\xb6rld \xf0\x9f\x91\x8d"]

    Args:
      model_proto: bytes, a serialized SentencePiece model with the reserved ids above
        (as `build` trains it).
      lowercase: lowercase the text before encoding it.
      name: module name.
      source: what `model_proto` was read from, for error messages.
    """

    kind = "sentencepiece"
    required_op_libraries = ("tensorflow_text",)

    def __init__(self, model_proto, lowercase=False, name=None, source="model_proto"):
        model_proto = bytes(model_proto)
        pieces = sentencepiece_model.check_model(model_proto, source)
        # Set before the base class runs: it traces `decode`, which uses the model.
        # The kernel names its model resource after the op: a name per model keeps two
        # models in one SavedModel (source and target) from resolving to the same one.
        self._sentencepiece = import_tensorflow_text().SentencepieceTokenizer(
            model=model_proto, out_type=tf.int32,
            name=f"sentencepiece_{hashlib.sha256(model_proto).hexdigest()[:16]}",
        )
        self._model_proto = model_proto
        self._settings = sentencepiece_model.model_settings(model_proto)
        self._nfc = self._settings["normalization"] == sentencepiece_model.NFC
        super().__init__(pieces, lowercase=lowercase, name=name)

    @classmethod
    def build(
        cls,
        texts,
        max_size=8000,
        min_count=1,
        lowercase=False,
        name=None,
        *,
        model_type="unigram",
        byte_fallback=True,
        normalization="nmt_nfkc",
        character_coverage=0.9995,
        max_sentences=sentencepiece_model.DEFAULT_MAX_SENTENCES,
        seed=0,
    ):
        """Trains a model on texts; see `zoo.data.sentencepiece_model.train_model`.

        `max_size` is the number of pieces (reserved tokens and byte pieces included); a
        corpus too small for it trains the largest vocabulary it allows and logs one
        warning. `min_count` must stay 1: SentencePiece sizes its vocabulary by `max_size`.
        """
        if min_count != 1:
            raise ValueError(
                f"min_count applies to char and word vocabularies; a sentencepiece vocabulary is "
                f"sized by max_size alone, got min_count={min_count}"
            )
        model_proto = sentencepiece_model.train_model(
            texts, max_size, model_type=model_type, byte_fallback=byte_fallback,
            normalization=normalization, character_coverage=character_coverage,
            lowercase=lowercase, max_sentences=max_sentences, seed=seed,
        )
        return cls(model_proto, lowercase=lowercase, name=name)

    @property
    def model_proto(self):
        """bytes: the serialized SentencePiece model (what `save` writes to `sentencepiece.model`)."""
        return self._model_proto

    def model_files(self):
        """`{"sentencepiece.model": model_proto}`: an export copies it into its assets."""
        return {MODEL_FILE: self._model_proto}

    def save(self, directory):
        """Writes `sentencepiece.model` and `tokenizer.json` (last: its presence marks a complete save)."""
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, MODEL_FILE), "wb") as f:
            f.write(self._model_proto)
        with open(os.path.join(directory, CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump(self.get_config(), f, indent=2, ensure_ascii=False)
            f.write("\n")

    def get_config(self):
        """The `tokenizer.json` content: the base fields, the model file and its settings."""
        return {**super().get_config(), "model_file": MODEL_FILE, **self._settings}

    @classmethod
    def from_directory(cls, directory, config):
        """The tokenizer saved in `directory`; one `ValueError` naming the file if it is unusable."""
        path = os.path.join(directory, config.get("model_file", MODEL_FILE))
        try:
            with open(path, "rb") as f:
                model_proto = f.read()
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: no such file (expected a SentencePiece model)") from None
        except OSError as error:
            raise ValueError(f"{path}: cannot read the SentencePiece model: {error.strerror}") from None
        tokenizer = cls(model_proto, lowercase=config.get("lowercase", False), source=path)
        expected = config.get("vocab_size")
        if expected is not None and expected != tokenizer.vocab_size:
            raise ValueError(
                f"{path}: expected {expected} pieces (from {CONFIG_FILE}), got {tokenizer.vocab_size}"
            )
        return tokenizer

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def tokenize(self, texts):
        """tf.string `(B,)` -> tf.RaggedTensor string `(B, None)`: the pieces `encode` maps."""
        return self._sentencepiece.id_to_string(self.encode(texts))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def encode(self, texts):
        """tf.string `(B,)` -> tf.RaggedTensor int32 `(B, None)`, without `<s>`/`</s>`."""
        texts = normalize(texts, self.lowercase)
        if self._nfc:  # the model's own rule is the identity: see zoo.constants.SPM_NORMALIZATIONS
            texts = import_tensorflow_text().normalize_utf8(texts, "NFC")
        return self._sentencepiece.tokenize(texts)

    def _detokenize(self, ids):
        """tf.RaggedTensor int64 `(B, None)` of regular ids -> tf.string `(B,)`."""
        ids = tf.ragged.map_flat_values(self._known, ids)
        return self._sentencepiece.detokenize(tf.cast(ids, tf.int32))

    def _known(self, ids):
        """Ids outside the vocabulary (not from this model) read as `<unk>`."""
        inside = tf.logical_and(ids >= 0, ids < self.vocab_size)
        return tf.where(inside, ids, tf.constant(vocabulary.UNK_ID, ids.dtype))
