"""Text that fits a figure: tokens shown readably, sentences wrapped or cut to a pixel width."""

import functools
import re

from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties

from zoo.constants import RESERVED_TOKENS
from zoo.data.char_tokenizer import SPACE
from zoo.data.word_tokenizer import JOINER

WORD_START = "\u2581"  # SentencePiece's word-start mark "▁" (CharTokenizer's space is the same character)
GLUE = "\u00b7"  # "·": the readable mark of "no space on this side" (the joiner is missing from the fonts)
VISIBLE_SPACE = "\u2423"  # "␣"
ELLIPSIS = "\u2026"  # "…"
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
MAX_TOKEN_CHARS = 20  # longer tokens are cut with an ellipsis in tick labels


def legend_label(name):
    """`name` as a legend entry: matplotlib leaves out of the legend a label that starts with "_", so such a
    name gets a space in front (shown, and still the name)."""
    name = str(name)
    return f" {name}" if name.startswith("_") else name


def cut(text, max_chars):
    """`text` itself, or its first `max_chars - 1` characters and an ellipsis."""
    return text if len(text) <= max_chars else text[: max(max_chars - 1, 0)] + ELLIPSIS


def readable_tokens(tokens):
    """Token strings as a person reads them on an axis.

    SentencePiece pieces lose their word-start mark and pieces inside a word get a leading
    `·`; the word tokenizer's joiner `￭` becomes `·` on its side; the character tokenizer's
    space (`▁` alone) and whitespace become `␣`; byte pieces of printable ASCII characters
    (`<0x27>`) become the character. Reserved tokens stay as they are.

    Args:
      tokens: list of str (or UTF-8 bytes), one per position.

    Returns:
      list of str of the same length.
    """
    tokens = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in tokens]
    # Multi-character tokens with a word-start mark only come from SentencePiece.
    sentencepiece = any(len(t) > 1 and t.startswith(WORD_START) for t in tokens)
    return [cut(_readable(t, sentencepiece), MAX_TOKEN_CHARS) for t in tokens]


def _readable(token, sentencepiece):
    if token in RESERVED_TOKENS:
        return token
    byte = _BYTE_PIECE.fullmatch(token)
    if byte and 0x20 < int(byte[1], 16) < 0x7F:  # SentencePiece's byte fallback of a printable ASCII character
        token = chr(int(byte[1], 16))
    if token == SPACE or not token.strip():
        return VISIBLE_SPACE
    if JOINER in token:
        core = token.strip(JOINER)
        return (GLUE if token.startswith(JOINER) else "") + core + (GLUE if token.endswith(JOINER) and core else "")
    if sentencepiece:
        return token[1:] if token.startswith(WORD_START) else GLUE + token
    return token


@functools.lru_cache(maxsize=8)
def _renderer(dpi):
    return RendererAgg(1, 1, dpi)


def text_width(text, fontsize, dpi):
    """Width in pixels of one line of `text` in the default font at `fontsize` points."""
    width, _, _ = _renderer(dpi).get_text_width_height_descent(text, FontProperties(size=fontsize), ismath=False)
    return width


def fit_text(text, max_width, fontsize, dpi, max_lines=3):
    """Wraps `text` at spaces into lines of at most `max_width` pixels.

    Words wider than a line are cut; when more than `max_lines` lines would be needed, the
    last one ends with an ellipsis.

    Returns:
      the wrapped text, lines joined with newlines.
    """
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if text_width(candidate, fontsize, dpi) <= max_width:
            line = candidate
            continue
        if line:
            lines.append(line)
        line = _cut_to_width(word, max_width, fontsize, dpi, ellipsis=False)
    lines.append(line)
    if len(lines) > max_lines:
        last = lines[max_lines - 1] + " " + ELLIPSIS
        lines = lines[: max_lines - 1] + [_cut_to_width(last, max_width, fontsize, dpi, ellipsis=True)]
    return "\n".join(lines)


def _cut_to_width(text, max_width, fontsize, dpi, ellipsis):
    """The longest prefix of `text` (plus an ellipsis if one is asked or needed) within `max_width`."""
    if text_width(text, fontsize, dpi) <= max_width:
        return text
    keep = len(text)
    while keep > 1 and text_width(text[:keep].rstrip() + ELLIPSIS, fontsize, dpi) > max_width:
        keep -= 1
    cut_text = text[:keep].rstrip()
    return cut_text + ELLIPSIS if ellipsis or keep < len(text) else cut_text
