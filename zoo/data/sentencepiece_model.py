"""SentencePiece models on the Python side: training one from text, checking a model file.

The graph side (encode/decode inside a SavedModel) is `SentencePieceTokenizer`; this module
only makes and reads the serialized `ModelProto` it runs, with the `sentencepiece` package.
"""

import io
import logging
import os
import re
import unicodedata

import tensorflow as tf

from zoo.constants import SPM_BYTE_PIECES, SPM_MODEL_TYPES, SPM_NORMALIZATIONS
from zoo.data import vocabulary
from zoo.data.normalization import normalize
from zoo.data.sampling import reservoir_sample

logger = logging.getLogger(__name__)

# The normalization "nfc" (zoo.constants.SPM_NORMALIZATIONS), which SentencePiece lacks: the
# tokenizer NFC-normalizes in the graph (TensorFlow Text's normalize_utf8) and the model,
# trained on NFC text with the identity rule, is named "nfc" so that whoever loads it knows.
NFC = "nfc"
# Sentences the trainer sees at most: a uniform sample of a larger corpus (bounded memory).
DEFAULT_MAX_SENTENCES = 300_000

_NORMALIZE_CHUNK = 4096
_TOO_HIGH = re.compile(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)")
_TOO_LOW = re.compile(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)")
_MODEL_TYPE_NAMES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
_TRAINER_MAX_SENTENCE_BYTES = 4192  # SentencePiece's default max_sentence_length


def train_model(
    texts,
    vocab_size,
    *,
    model_type="unigram",
    byte_fallback=True,
    normalization="nmt_nfkc",
    character_coverage=0.9995,
    lowercase=False,
    max_sentences=DEFAULT_MAX_SENTENCES,
    seed=0,
):
    """Trains a SentencePiece model whose ids 0-3 are the zoo's reserved tokens.

    Args:
      texts: iterable of str, read once (a generator over a large file is fine).
      vocab_size: pieces in the model, reserved tokens (and byte pieces) included. A corpus
        too small for it gives the largest size it allows, with one logged warning.
      model_type: "unigram" or "bpe".
      byte_fallback: characters outside the vocabulary become UTF-8 byte pieces instead
        of `<unk>` (`SPM_BYTE_PIECES` pieces of the vocabulary).
      normalization: one of `SPM_NORMALIZATIONS` ("nmt_nfkc": NFKC plus whitespace cleanup;
        "nfc": canonical composition only, so compatibility characters such as "ﬁ" or
        full-width letters stay as they are).
      character_coverage: share of the corpus' characters that get pieces of their own.
      lowercase: lowercase the texts first (the tokenizer does the same in the graph).
      max_sentences: the trainer sees a uniform sample of at most this many texts.
      seed: sampling seed.

    Returns:
      bytes: the serialized model.
    """
    _check_options(vocab_size, model_type, normalization, character_coverage)
    sample, count = reservoir_sample(_strings(texts), max_sentences, seed)
    sentences = _normalized(sample, lowercase)
    if normalization == NFC:
        sentences = [unicodedata.normalize("NFC", sentence) for sentence in sentences]
    if not sentences:
        raise ValueError(f"cannot train a sentencepiece model: the {count} texts given hold no text")
    size = vocab_size
    while True:
        try:
            model = _train(sentences, size, model_type, byte_fallback,
                           "identity" if normalization == NFC else normalization, character_coverage)
            break
        except RuntimeError as error:
            size = _smaller_size(str(error), size, byte_fallback)
    if normalization == NFC:
        model = _renamed_rule(model, NFC)
    if size != vocab_size:
        logger.warning(
            "the training text is too small for vocab_size=%d: trained %d pieces instead "
            "(%d sentences seen)", vocab_size, size, len(sentences)
        )
    return model


def check_model(model_proto, source):
    """The pieces of a serialized model, in id order; `ValueError` naming `source` if unusable.

    A usable model parses, and its ids 0-3 are `<pad>`, `<unk>`, `<s>`, `</s>` in their
    reserved roles (a model trained elsewhere usually puts `<unk>` at 0).
    """
    import sentencepiece  # noqa: PLC0415  only needed to read or train a model

    if not model_proto:
        raise ValueError(f"{source}: empty file, expected a SentencePiece model")
    try:
        processor = sentencepiece.SentencePieceProcessor(model_proto=model_proto)
    except (RuntimeError, OSError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(f"{source}: not a SentencePiece model ({reason})") from None
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    roles = (processor.pad_id(), processor.unk_id(), processor.bos_id(), processor.eos_id())
    if pieces[:4] != list(vocabulary.RESERVED_TOKENS) or roles != (0, 1, 2, 3):
        raise ValueError(
            f"{source}: a SentencePiece model with {pieces[:4]} at ids 0-3 (pad, unk, bos, eos "
            f"ids {list(roles)}); expected {list(vocabulary.RESERVED_TOKENS)} at ids 0-3, as "
            f"`SentencePieceTokenizer.build` trains them"
        )
    return pieces


def model_settings(model_proto):
    """What a model was trained with: dict of model_type, byte_fallback, normalization."""
    from sentencepiece import sentencepiece_model_pb2  # noqa: PLC0415

    proto = sentencepiece_model_pb2.ModelProto.FromString(model_proto)
    return {
        "model_type": _MODEL_TYPE_NAMES.get(proto.trainer_spec.model_type, "unknown"),
        "byte_fallback": bool(proto.trainer_spec.byte_fallback),
        "normalization": proto.normalizer_spec.name,
    }


def _renamed_rule(model_proto, name):
    """The model with its normalizer's name set to `name` (its rule itself unchanged)."""
    from sentencepiece import sentencepiece_model_pb2  # noqa: PLC0415

    proto = sentencepiece_model_pb2.ModelProto.FromString(model_proto)
    proto.normalizer_spec.name = name
    return proto.SerializeToString()


def _check_options(vocab_size, model_type, normalization, character_coverage):
    if model_type not in SPM_MODEL_TYPES:
        raise ValueError(f"unknown sentencepiece model_type {model_type!r}, expected one of {list(SPM_MODEL_TYPES)}")
    if normalization not in SPM_NORMALIZATIONS:
        raise ValueError(
            f"unknown sentencepiece normalization {normalization!r}, expected one of {list(SPM_NORMALIZATIONS)}"
        )
    if not 0 < character_coverage <= 1:
        raise ValueError(f"character_coverage must be in (0, 1], got {character_coverage}")
    if vocab_size is None or vocab_size <= len(vocabulary.RESERVED_TOKENS):
        raise ValueError(
            f"a sentencepiece vocab_size must leave room after the {len(vocabulary.RESERVED_TOKENS)} "
            f"reserved tokens, got {vocab_size}"
        )


def _strings(texts):
    if isinstance(texts, (str, bytes)):  # would be read one character at a time
        raise TypeError(f"expected texts as an iterable of str, got one {type(texts).__name__}: {texts[:50]!r}")
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"expected texts as str, got {type(text).__name__}: {text!r}")
        yield text


def _normalized(texts, lowercase):
    """The texts as the tokenizer sees them in the graph, empty ones left out."""
    sentences = []
    for start in range(0, len(texts), _NORMALIZE_CHUNK):
        # "replace": a lone surrogate (text read with errors="surrogateescape") becomes "?".
        chunk = [text.encode("utf-8", "replace") for text in texts[start : start + _NORMALIZE_CHUNK]]
        chunk = tf.constant(chunk, dtype=tf.string)
        cleaned = normalize(chunk, lowercase).numpy().tolist()
        sentences.extend(text.decode("utf-8") for text in cleaned if text)
    return sentences


def _train(sentences, vocab_size, model_type, byte_fallback, normalization, character_coverage):
    import sentencepiece  # noqa: PLC0415

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        model_type=model_type,
        vocab_size=vocab_size,
        byte_fallback=byte_fallback,
        normalization_rule_name=normalization,
        character_coverage=character_coverage,
        # The trainer skips, without a word, every sentence longer than this (4192 bytes by default).
        max_sentence_length=max([_TRAINER_MAX_SENTENCE_BYTES] + [len(text.encode("utf-8")) + 1 for text in sentences]),
        pad_id=vocabulary.PAD_ID,
        unk_id=vocabulary.UNK_ID,
        bos_id=vocabulary.BOS_ID,
        eos_id=vocabulary.EOS_ID,
        pad_piece=vocabulary.PAD,
        unk_piece=vocabulary.UNK,
        bos_piece=vocabulary.BOS,
        eos_piece=vocabulary.EOS,
        num_threads=max(1, min(os.cpu_count() or 1, 16)),
        minloglevel=2,  # the trainer's progress lines would flood the training log
    )
    return model.getvalue()


def _smaller_size(message, size, byte_fallback):
    """The vocabulary size to retry with after a failed training, or raises `ValueError`."""
    too_high = _TOO_HIGH.search(message)
    if too_high and int(too_high.group(2)) < size:
        return int(too_high.group(2))
    too_low = _TOO_LOW.search(message)
    if too_low:
        needed = int(too_low.group(2))
        what = f"reserved tokens, {SPM_BYTE_PIECES} byte pieces" if byte_fallback else "reserved tokens"
        raise ValueError(
            f"vocab_size={size} is too small for this corpus: its {what} and characters need "
            f"{needed} pieces; expected vocab_size >= {needed} (or, from Python, a lower character_coverage)"
        ) from None
    raise ValueError(f"sentencepiece training failed: {message.strip()}") from None
