"""The tokenizer base class: a vocabulary, two lookup tables and in-graph encode/decode.

A tokenizer is a `tf.Module`, so its lookup tables are tracked and travel inside any
SavedModel that holds it. The char and word kinds run core TensorFlow ops only
(`tf.strings`, `tf.lookup`, `tf.ragged`), so their exports need nothing but TensorFlow; a
kind that needs more names the Python modules of its ops in `required_op_libraries`.
Subclasses say how normalized text splits into tokens (`_split`) and how tokens join back
into text (`_join`), or replace `encode`/`tokenize`/`_detokenize` altogether.
"""

import collections
import json
import os

import tensorflow as tf

from zoo.data import tokenizer_kinds, vocabulary
from zoo.data.normalization import normalize
from zoo.data.tokenizer_kinds import CONFIG_FILE, load_tokenizer

VOCAB_FILE = "vocab.txt"
FORMAT_VERSION = 1

_BUILD_CHUNK = 4096


class Tokenizer(tf.Module):
    """A vocabulary with in-graph `encode`, `tokenize`, `decode` and `id_to_token`.

    Ids follow `zoo.data.vocabulary`: `<pad>`=0, `<unk>`=1, `<s>`=2, `</s>`=3, then the
    tokens of the training data by descending frequency. `encode` never adds `<s>`/`</s>`.

    Args:
      vocab: list of str, the reserved tokens first (in id order), no duplicates, no
        whitespace inside a token.
      lowercase: lowercase the text before splitting it.
      name: module name.

    Subclasses set `kind` (the `type` written to `tokenizer.json`) and implement
    `_split(texts) -> tf.RaggedTensor string (B, None)` on normalized text and
    `_join(tokens) -> tf.string (B,)`.
    """

    kind = None
    # Python modules whose custom ops the in-graph methods use (imported before loading an export).
    required_op_libraries = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind is not None:
            tokenizer_kinds.register(cls)

    def __init__(self, vocab, lowercase=False, name=None):
        super().__init__(name=name)
        vocab = list(vocab)
        _check_vocab(vocab)
        self.lowercase = bool(lowercase)
        # A tensor, not a Python list: tf.Module would wrap a list in a tracked structure.
        self._vocab_tensor = tf.constant(vocab, dtype=tf.string)
        ids = tf.range(len(vocab), dtype=tf.int64)
        self._token_to_id = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(self._vocab_tensor, ids),
            default_value=vocabulary.UNK_ID,
        )
        self._id_to_token = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(ids, self._vocab_tensor),
            default_value=vocabulary.UNK,
        )
        # Trace the polymorphic functions now so that a SavedModel holding this module
        # carries every variant (dense int32/int64, ragged) even if none was called yet.
        for spec in (
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([None, None], tf.int64),
            tf.RaggedTensorSpec([None, None], tf.int32, ragged_rank=1),
        ):
            self.decode.get_concrete_function(spec)
        for dtype in (tf.int32, tf.int64):
            self.id_to_token.get_concrete_function(tf.TensorSpec(None, dtype))

    # -- building, saving, loading ---------------------------------------------------------

    @classmethod
    def build(cls, texts, max_size=None, min_count=1, lowercase=False, name=None):
        """Builds the vocabulary from training texts with the same TF ops as `tokenize`.

        Args:
          texts: iterable of str.
          max_size: largest vocabulary size, reserved tokens included; None for no limit.
          min_count: tokens seen fewer times are left out (they will encode as `<unk>`).
          lowercase: lowercase the text before splitting it.
          name: module name.

        Returns:
          A tokenizer whose vocabulary is the reserved tokens, then tokens by descending
          count, ties broken by code point order (deterministic).
        """
        if max_size is not None and max_size <= len(vocabulary.RESERVED_TOKENS):
            raise ValueError(
                f"max_size must leave room after the {len(vocabulary.RESERVED_TOKENS)} "
                f"reserved tokens, got max_size={max_size}"
            )
        if min_count < 1:
            raise ValueError(f"min_count must be >= 1, got {min_count}")
        if isinstance(texts, (str, bytes)):  # would be read one character at a time
            raise TypeError(f"expected texts as an iterable of str, got one {type(texts).__name__}: {texts[:50]!r}")
        counts = collections.Counter()
        chunk = []
        num_texts = 0
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"expected texts as str, got {type(text).__name__}: {text!r}")
            chunk.append(text)
            num_texts += 1
            if len(chunk) == _BUILD_CHUNK:
                counts.update(cls._count_pieces(chunk, lowercase))
                chunk = []
        if chunk:
            counts.update(cls._count_pieces(chunk, lowercase))
        for token in vocabulary.RESERVED_TOKENS:
            counts.pop(token, None)
        if not counts:
            raise ValueError(
                f"cannot build a {cls.kind} vocabulary: the {num_texts} texts given hold no token"
            )
        ranked = sorted(
            (token for token, count in counts.items() if count >= min_count),
            key=lambda token: (-counts[token], token),
        )
        if not ranked:  # only the reserved tokens: every text would encode as <unk>
            top = min(counts, key=lambda token: (-counts[token], token))
            raise ValueError(
                f"cannot build a {cls.kind} vocabulary: no token of the {num_texts} texts is seen "
                f"min_count={min_count} times (vocab_min_count; the most frequent, {top!r}, is seen "
                f"{counts[top]}); expected min_count <= {counts[top]}"
            )
        if max_size is not None:
            ranked = ranked[: max_size - len(vocabulary.RESERVED_TOKENS)]
        return cls(list(vocabulary.RESERVED_TOKENS) + ranked, lowercase=lowercase, name=name)

    @classmethod
    def _count_pieces(cls, texts, lowercase):
        pieces = cls._split(normalize(tf.constant(texts, dtype=tf.string), lowercase))
        return collections.Counter(
            token.decode("utf-8") for token in pieces.flat_values.numpy().tolist()
        )

    def save(self, directory):
        """Writes `vocab.txt` (one token per line, in id order) and `tokenizer.json`."""
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, VOCAB_FILE), "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(self.vocab) + "\n")
        with open(os.path.join(directory, CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump(self.get_config(), f, indent=2, ensure_ascii=False)
            f.write("\n")

    def get_config(self):
        """The `tokenizer.json` content (the vocabulary itself is in `vocab.txt`)."""
        return {
            "type": self.kind,
            "lowercase": self.lowercase,
            "vocab_size": self.vocab_size,
            "reserved_tokens": list(vocabulary.RESERVED_TOKENS),
            "format_version": FORMAT_VERSION,
        }

    @classmethod
    def load(cls, directory):
        """Reads a tokenizer saved by `save`; fails if it is not of this class."""
        tokenizer = load_tokenizer(directory)
        if not isinstance(tokenizer, cls):
            raise ValueError(
                f"{directory}: expected a {cls.kind} tokenizer, found a {tokenizer.kind} one"
            )
        return tokenizer

    @classmethod
    def from_directory(cls, directory, config):
        """The tokenizer saved in `directory`, whose `tokenizer.json` holds `config` (a dict)."""
        vocab_path = os.path.join(directory, VOCAB_FILE)
        if not os.path.isfile(vocab_path):
            raise FileNotFoundError(f"{vocab_path}: no such file (expected a saved tokenizer)")
        with open(vocab_path, encoding="utf-8", newline="") as f:
            # split("\n"), not splitlines(): the latter also breaks on U+2028 and friends.
            vocab = f.read().split("\n")
        if vocab and vocab[-1] == "":
            vocab.pop()
        expected = config.get("vocab_size")
        if expected is not None and expected != len(vocab):
            raise ValueError(
                f"{vocab_path}: expected {expected} tokens (from {CONFIG_FILE}), got {len(vocab)}"
            )
        try:
            return cls(vocab, lowercase=config.get("lowercase", False))
        except ValueError as error:
            raise ValueError(f"{vocab_path}: {error}") from None

    def model_files(self):
        """`{file name: bytes}`: what the tokenizer runs from besides its vocabulary ({} here).

        An export copies them into its `assets/` (`<side>_<file name>`) for users to inspect.
        """
        return {}

    # -- vocabulary ------------------------------------------------------------------------

    @property
    def vocab(self):
        """list of str: the tokens in id order, reserved tokens first."""
        return [token.decode("utf-8") for token in self._vocab_tensor.numpy().tolist()]

    @property
    def vocab_size(self):
        return int(self._vocab_tensor.shape[0])

    # -- in-graph methods ------------------------------------------------------------------

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def tokenize(self, texts):
        """tf.string `(B,)` -> tf.RaggedTensor string `(B, None)`: the tokens `encode` maps."""
        return self._split(normalize(texts, self.lowercase))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def encode(self, texts):
        """tf.string `(B,)` -> tf.RaggedTensor int32 `(B, None)`, without `<s>`/`</s>`.

        Tokens missing from the vocabulary map to `UNK_ID`.
        """
        tokens = self._split(normalize(texts, self.lowercase))
        ids = tf.ragged.map_flat_values(self._token_to_id.lookup, tokens)
        return tf.cast(ids, tf.int32)

    @tf.function(autograph=False)
    def decode(self, ids):
        """Ids -> text.

        Args:
          ids: int32 or int64 `(B, T)`, dense or ragged; each row is read up to its first
            `</s>`; `<pad>` and `<s>` are dropped, out-of-range ids read as `<unk>` (written
            `<unk>` by the word and character tokenizers, " ⁇ " by SentencePiece, its own surface).

        Returns:
          tf.string `(B,)`.
        """
        if isinstance(ids, tf.RaggedTensor):
            ids = ids.to_tensor(default_value=vocabulary.PAD_ID)
        ids = tf.cast(ids, tf.int64)
        before_eos = tf.equal(tf.cumsum(tf.cast(tf.equal(ids, vocabulary.EOS_ID), tf.int32), axis=1), 0)
        keep = before_eos & tf.not_equal(ids, vocabulary.PAD_ID) & tf.not_equal(ids, vocabulary.BOS_ID)
        return self._detokenize(tf.ragged.boolean_mask(ids, keep))

    @tf.function(autograph=False)
    def id_to_token(self, ids):
        """int32/int64 ids of any shape -> tf.string of the same shape (`<unk>` if unknown)."""
        return self._id_to_token.lookup(tf.cast(ids, tf.int64))

    def _detokenize(self, ids):
        """tf.RaggedTensor int64 `(B, None)` of regular ids -> tf.string `(B,)`."""
        return self._join(tf.ragged.map_flat_values(self._id_to_token.lookup, ids))

    @staticmethod
    def _split(texts):
        raise NotImplementedError

    def _join(self, tokens):
        raise NotImplementedError


def _check_vocab(vocab):
    reserved = list(vocabulary.RESERVED_TOKENS)
    if vocab[: len(reserved)] != reserved:
        raise ValueError(
            f"a vocabulary must start with the reserved tokens {reserved}, got {vocab[:4]}"
        )
    seen = set()
    for index, token in enumerate(vocab):
        if not isinstance(token, str) or not token:
            raise ValueError(f"vocabulary entry {index}: expected a non-empty str, got {token!r}")
        if any(c in token for c in " \t\n\r"):
            raise ValueError(f"vocabulary entry {index}: tokens hold no whitespace, got {token!r}")
        if token in seen:
            raise ValueError(f"vocabulary entry {index}: duplicate token {token!r}")
        seen.add(token)
