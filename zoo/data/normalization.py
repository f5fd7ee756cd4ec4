"""Text cleaning shared by every tokenizer, in the graph: valid UTF-8, one kind of space."""

import tensorflow as tf

# Text is made valid UTF-8, every whitespace character (Unicode separators included, e.g.
# the no-break space of French typography) becomes one ASCII space, other control
# characters go away. Tokens therefore never hold a newline, which keeps vocab.txt safe.
_WHITESPACE = r"[\t\n\x0b\f\r\x{85}\p{Z}]"


def normalize(texts, lowercase=False):
    """Cleans a batch of texts the way every tokenizer sees them.

    Args:
      texts: tf.string `(B,)`.
      lowercase: lowercase with Unicode case rules.

    Returns:
      tf.string `(B,)`: valid UTF-8 (bad bytes become U+FFFD), runs of whitespace collapsed
      to one space, no control characters, no leading or trailing space.
    """
    texts = tf.strings.unicode_transcode(
        texts, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )
    texts = tf.strings.regex_replace(texts, _WHITESPACE, " ")
    texts = tf.strings.regex_replace(texts, r"\p{Cc}", "")
    texts = tf.strings.regex_replace(texts, r" +", " ")
    texts = tf.strings.strip(texts)
    if lowercase:
        texts = tf.strings.lower(texts, encoding="utf-8")
    return texts
