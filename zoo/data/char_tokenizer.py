"""Character-level tokenizer: one token per Unicode code point, the space included."""

import tensorflow as tf

from zoo.data.tokenizer import Tokenizer

SPACE = "\u2581"  # "▁": the visible stand-in for " " in tokens and in vocab.txt


class CharTokenizer(Tokenizer):
    """One token per Unicode code point; the space is the token `▁`.

    Text is normalized first (see `zoo.data.normalize`): runs of whitespace
    become one space, so the vocabulary never holds a tab or a newline. Characters outside
    the vocabulary (emoji, other scripts) encode as `<unk>`. A literal `▁` in the input
    reads as a space.

    Example:
      >>> tok = CharTokenizer.build(["3 mars 2021"])
      >>> tok.tokenize(["3 mars"])  # [[b"3", b"\xe2\x96\x81", b"m", b"a", b"r", b"s"]]

    Args: see `Tokenizer`.
    """

    kind = "char"

    @staticmethod
    def _split(texts):
        """Normalized tf.string `(B,)` -> tf.RaggedTensor string `(B, None)`."""
        texts = tf.strings.regex_replace(texts, " ", SPACE)
        return tf.strings.unicode_split(texts, "UTF-8")

    def _join(self, tokens):
        """tf.RaggedTensor string `(B, None)` -> tf.string `(B,)`."""
        texts = tf.strings.reduce_join(tokens, axis=-1, separator="")
        return tf.strings.strip(tf.strings.regex_replace(texts, SPACE, " "))
