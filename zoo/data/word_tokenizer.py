"""Word-level tokenizer: whitespace words, punctuation and symbols as tokens of their own."""

import tensorflow as tf

from zoo.data.tokenizer import Tokenizer

JOINER = "\uffed"  # "￭": marks a token that was glued to its neighbour (no space between)

# Internal markers: \x01 = glued to the previous character, \x02 = glued to the next one.
# Control characters are gone after normalization, so these cannot come from the text.
_PUNCT = r"([\pP\pS])"


class WordTokenizer(Tokenizer):
    """Words split on whitespace; each punctuation mark or symbol is a token of its own.

    Splitting is reversible: a punctuation token that touched its neighbour in the text
    carries the joiner `￭` on that side (OpenNMT's "joiner annotation"), so
    `"l’homme, 03.03.21"` tokenizes as `l ￭’￭ homme ￭, 03 ￭.￭ 03 ￭.￭ 21` and `decode` gives
    back exactly the normalized text: `"« Bonjour » !"` and `"«Bonjour»!"` both survive a
    round trip. Digits stay together (`2021`), letters with their combining marks too;
    words outside the vocabulary (other scripts, rare words) encode as `<unk>`.

    Example:
      >>> tok = WordTokenizer.build(["Hello, world!"], lowercase=True)
      >>> tok.decode(tok.encode(["hello world!"]))  # [b"hello world!"]

    Args: see `Tokenizer`.
    """

    kind = "word"

    @classmethod
    def build(cls, texts, max_size=8000, min_count=1, lowercase=False, name=None):
        """Builds the vocabulary from texts; see `Tokenizer.build` (`max_size` counts reserved tokens)."""
        return super().build(
            texts, max_size=max_size, min_count=min_count, lowercase=lowercase, name=name
        )

    @staticmethod
    def _split(texts):
        """Normalized tf.string `(B,)` -> tf.RaggedTensor string `(B, None)`."""
        # The joiner is a symbol (So) itself: drop it from the text so that it only marks.
        texts = tf.strings.regex_replace(texts, JOINER, "")
        texts = tf.strings.regex_replace(texts, _PUNCT, "\x01\\1\x02")
        # A marker next to a space or an end of the text means "not glued": remove it.
        texts = tf.strings.regex_replace(texts, r"(^| )\x01", r"\1")
        texts = tf.strings.regex_replace(texts, r"\x02( |$)", r"\1")
        # Between two glued marks one joiner is enough; keep it on the second one.
        texts = tf.strings.regex_replace(texts, "\x02\x01", "\x01")
        texts = tf.strings.regex_replace(texts, "\x01", " " + JOINER)
        texts = tf.strings.regex_replace(texts, "\x02", JOINER + " ")
        return tf.strings.split(texts)

    def _join(self, tokens):
        """tf.RaggedTensor string `(B, None)` -> tf.string `(B,)`."""
        texts = tf.strings.reduce_join(tokens, axis=-1, separator=" ")
        texts = tf.strings.regex_replace(texts, " ?" + JOINER + " ?", "")
        return tf.strings.strip(texts)
