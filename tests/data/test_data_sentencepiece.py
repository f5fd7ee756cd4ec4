"""SentencePiece tokenizer: NFKC round trips, byte fallback, training edge cases, files, SavedModel."""

import logging
import os
import subprocess
import sys
import textwrap
import unicodedata

import pytest
import tensorflow as tf

from zoo.data import (
    CharTokenizer,
    SentencePieceTokenizer,
    WordTokenizer,
    build_tokenizer,
    build_tokenizer_pair,
    load_tokenizer,
    tokenizer_types,
    vocabulary,
)
from zoo.data import sentencepiece_tokenizer

TRAIN = [
    "Le chat est sur le tapis.",
    "Où est la bibliothèque ? Elle est fermée.",
    "The cat is on the mat, and the dog is in the garden.",
    "Der Hund läuft schnell über die Straße.",
    "日本語の文章を書きます。",
    "Привет, как дела?",
    "Ελληνικά γράμματα",
    "I love it 👍 so much 🎉",
    "",
    "   ",
] * 20

# Accents (precomposed and combining), compatibility forms NFKC folds, CJK, emoji with a
# skin tone modifier, scripts never seen in training, mixed scripts in one word.
SAMPLE = [
    "Ça va, Hélène ? Oui, très bien.",
    "e\u0301te\u0301 à la plage",
    "ｆｕｌｌ-width ﬁne № ① ㎏",
    "中文和日本語と한국어",
    "emoji 👍🏽🎉🇫🇷 mix",
    "Привет world Ελλάδα mix",
    "ქართული ᏣᎳᎩ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "",
]


def _strings(tensor):
    return [s.decode("utf-8") for s in tensor.numpy().tolist()]


def _nfkc(text):
    return " ".join(unicodedata.normalize("NFKC", text).split())


@pytest.fixture(scope="module")
def unigram():
    return SentencePieceTokenizer.build(TRAIN, max_size=340)


@pytest.fixture(scope="module")
def bpe():
    return SentencePieceTokenizer.build(TRAIN, max_size=400, model_type="bpe")


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_round_trip_is_nfkc_in_any_script(kind, request):
    tok = request.getfixturevalue(kind)
    assert tok.get_config()["model_type"] == kind
    decoded = _strings(tok.decode(tok.encode(tf.constant(SAMPLE))))
    assert decoded == [_nfkc(text) for text in SAMPLE]
    assert decoded[2] == "full-width fine No 1 kg"  # NFKC folded, not just passed through


def test_nfc_normalization_composes_but_keeps_compatibility_forms(tmp_path):
    tok = SentencePieceTokenizer.build(TRAIN, max_size=340, normalization="nfc")
    assert tok.get_config()["normalization"] == "nfc"
    decoded = _strings(tok.decode(tok.encode(tf.constant(SAMPLE))))
    assert decoded == [" ".join(unicodedata.normalize("NFC", text).split()) for text in SAMPLE]
    assert decoded[1] == "\u00e9t\u00e9 \u00e0 la plage" and decoded[2] == "ｆｕｌｌ-width ﬁne № ① ㎏"
    tok.save(str(tmp_path))  # the rule's name travels in the model file: a loaded one normalizes alike
    again = load_tokenizer(str(tmp_path))
    assert again.encode(tf.constant(SAMPLE)).to_list() == tok.encode(tf.constant(SAMPLE)).to_list()


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_byte_fallback_never_gives_unk(kind, request):
    tok = request.getfixturevalue(kind)
    ids = tok.encode(tf.constant(SAMPLE + ["\U0001f9ec \u2603 \u0b95"]))
    assert vocabulary.UNK_ID not in ids.flat_values.numpy().tolist()
    assert vocabulary.UNK not in [t.decode() for t in tok.tokenize(tf.constant(SAMPLE)).flat_values.numpy()]
    # Georgian was never seen: it is spelled in UTF-8 byte pieces.
    assert "<0xE1>" in [t.decode() for t in tok.tokenize(tf.constant(["ქ"])).flat_values.numpy()]


def test_without_byte_fallback_unseen_characters_are_unk():
    tok = SentencePieceTokenizer.build(TRAIN, max_size=85, byte_fallback=False)
    assert tok.get_config()["byte_fallback"] is False
    ids = tok.encode(tf.constant(["ქ"])).to_list()[0]
    assert vocabulary.UNK_ID in ids
    assert "<unk>" not in _strings(tok.decode(tf.constant([ids])))[0]  # the unknown surface is ⁇


def test_reserved_ids_and_vocab(unigram):
    assert unigram.vocab[:4] == list(vocabulary.RESERVED_TOKENS)
    assert unigram.vocab[4:8] == ["<0x00>", "<0x01>", "<0x02>", "<0x03>"]
    assert unigram.vocab_size == len(unigram.vocab) == 340
    tokens = unigram.id_to_token(tf.constant([[0, 1], [2, 3], [unigram.vocab_size, -1]]))
    assert [_strings(row) for row in tokens] == [["<pad>", "<unk>"], ["<s>", "</s>"], ["<unk>", "<unk>"]]
    assert unigram.encode(tf.constant(["", " \t "])).to_list() == [[], []]


def test_decode_stops_at_eos_and_reads_foreign_ids_as_unknown(unigram):
    ids = unigram.encode(tf.constant(["Le chat"])).to_list()[0]
    pad, bos, eos = vocabulary.PAD_ID, vocabulary.BOS_ID, vocabulary.EOS_ID
    dense = tf.constant([[bos] + ids + [eos] + ids, ids + [pad, eos] + ids])
    assert _strings(unigram.decode(dense)) == ["Le chat", "Le chat"]
    assert _strings(unigram.decode(tf.cast(dense, tf.int64))) == ["Le chat", "Le chat"]
    assert _strings(unigram.decode(tf.constant([ids + [10**6, -1, eos]]))) == ["Le chat ⁇  ⁇ "]


def test_invalid_utf8_control_characters_and_whitespace_go_through(unigram):
    texts = tf.constant([b"caf\xc3 \xff ok", b"a\tb\x00c\r\n", b"\xe2\x80\xa8 \xc2\xa0"])
    # Bad bytes become U+FFFD, which the nmt_nfkc rule then drops.
    assert _strings(unigram.decode(unigram.encode(texts))) == ["caf ok", "a bc", ""]
    tok = SentencePieceTokenizer.build(["caf\udcff", "ok \x00\t x", ""] * 5 + TRAIN, max_size=400, model_type="bpe")
    assert tok.vocab_size == 400


def test_lowercase_runs_in_the_graph():
    tok = SentencePieceTokenizer.build(TRAIN, max_size=340, lowercase=True)
    assert _strings(tok.decode(tok.encode(tf.constant(["LE CHAT Écrit"])))) == ["le chat écrit"]
    assert not any(piece.strip("▁").isupper() for piece in tok.vocab[260:])


def test_too_small_corpus_trains_a_smaller_vocabulary_with_one_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="zoo.data.sentencepiece_model"):
        tok = SentencePieceTokenizer.build(TRAIN, max_size=8000)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert f"too small for vocab_size=8000: trained {tok.vocab_size} pieces" in warnings[0]
    assert 300 < tok.vocab_size < 8000
    assert _strings(tok.decode(tok.encode(tf.constant(SAMPLE)))) == [_nfkc(t) for t in SAMPLE]


def test_bad_training_arguments_say_what_was_expected():
    with pytest.raises(ValueError, match=r"vocab_size=270 is too small .* expected vocab_size >= \d+"):
        SentencePieceTokenizer.build(TRAIN, max_size=270)
    with pytest.raises(ValueError, match="unknown sentencepiece model_type 'word'"):
        SentencePieceTokenizer.build(TRAIN, model_type="word")
    with pytest.raises(ValueError, match="unknown sentencepiece normalization 'nfd'"):
        SentencePieceTokenizer.build(TRAIN, normalization="nfd")
    with pytest.raises(ValueError, match="min_count=2"):
        SentencePieceTokenizer.build(TRAIN, min_count=2)
    with pytest.raises(ValueError, match="the 3 texts given hold no text"):
        SentencePieceTokenizer.build(["", " ", "\t"], max_size=300)
    with pytest.raises(TypeError, match="expected texts as str, got bytes"):
        SentencePieceTokenizer.build([b"abc"], max_size=300)


def test_bounded_sample_trains_on_at_most_max_sentences(caplog):
    texts = (f"sentence number {i} of many" for i in range(100_000))
    with caplog.at_level(logging.WARNING, logger="zoo.data.sentencepiece_model"):
        SentencePieceTokenizer.build(texts, max_size=8000, max_sentences=50)
    assert "(50 sentences seen)" in caplog.records[-1].getMessage()


def test_save_and_load_round_trip(tmp_path, unigram, bpe):
    for tok, name in ((unigram, "unigram"), (bpe, "bpe")):
        directory = tmp_path / name
        tok.save(str(directory))
        assert sorted(os.listdir(directory)) == ["sentencepiece.model", "tokenizer.json"]
        assert (directory / "sentencepiece.model").read_bytes() == tok.model_proto
        loaded = load_tokenizer(str(directory))
        assert type(loaded) is SentencePieceTokenizer and loaded.get_config() == tok.get_config()
        assert loaded.vocab == tok.vocab
        texts = tf.constant(SAMPLE)
        assert loaded.encode(texts).to_list() == tok.encode(texts).to_list()
    assert SentencePieceTokenizer.load(str(tmp_path / "bpe")).get_config()["model_type"] == "bpe"
    WordTokenizer.build(["a b"]).save(str(tmp_path / "word"))
    with pytest.raises(ValueError, match="expected a sentencepiece tokenizer, found a word one"):
        SentencePieceTokenizer.load(str(tmp_path / "word"))


def test_bad_model_files_are_one_error_naming_the_file(tmp_path, unigram):
    import io

    import sentencepiece

    directory = tmp_path / "vocab"
    unigram.save(str(directory))
    model_path = directory / "sentencepiece.model"
    for content, reason in (
        (b"", "empty file, expected a SentencePiece model"),
        (b"not a model at all \xff\x00", "not a SentencePiece model"),
        (WordTokenizer.build(["a"]).vocab[0].encode() * 40, "not a SentencePiece model"),
    ):
        model_path.write_bytes(content)
        with pytest.raises(ValueError, match=f"^{model_path}: {reason}"):
            load_tokenizer(str(directory))
    # A model trained elsewhere with SentencePiece's own ids (<unk>=0, <s>=1, </s>=2).
    foreign = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(TRAIN), model_writer=foreign, vocab_size=85, minloglevel=2
    )
    model_path.write_bytes(foreign.getvalue())
    with pytest.raises(ValueError, match=rf"^{model_path}: a SentencePiece model with \['<unk>', '<s>', '</s>'"):
        load_tokenizer(str(directory))
    model_path.unlink()
    with pytest.raises(FileNotFoundError, match=rf"^{model_path}: no such file"):
        load_tokenizer(str(directory))
    unigram.save(str(directory))
    config = (directory / "tokenizer.json").read_text().replace('"vocab_size": 340', '"vocab_size": 341')
    (directory / "tokenizer.json").write_text(config)
    with pytest.raises(ValueError, match=rf"^{model_path}: expected 341 pieces \(from tokenizer.json\), got 340"):
        load_tokenizer(str(directory))


def test_kind_registry_op_libraries_and_shared_vocabularies(unigram):
    assert "sentencepiece" in tokenizer_types()
    assert SentencePieceTokenizer.required_op_libraries == ("tensorflow_text",)
    assert CharTokenizer.required_op_libraries == () and WordTokenizer.required_op_libraries == ()
    assert build_tokenizer("sentencepiece", TRAIN, max_size=340).vocab == unigram.vocab
    pairs = [("le chat noir", "the black cat"), ("le chien blanc", "the white dog")] * 30
    source, target = build_tokenizer_pair("sentencepiece", pairs, shared=True, max_size=300, byte_fallback=False)
    assert source is target
    assert vocabulary.UNK_ID not in source.encode(tf.constant(["le chat", "the cat"])).flat_values.numpy()
    source, target = build_tokenizer_pair("sentencepiece", pairs, max_size=300, byte_fallback=False)
    # "g" is only on the target side.
    assert vocabulary.UNK_ID in source.encode(tf.constant(["dog"])).flat_values.numpy()
    assert vocabulary.UNK_ID not in target.encode(tf.constant(["dog"])).flat_values.numpy()


def test_runs_inside_tf_function_and_tf_data(unigram):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def round_trip(texts):
        return unigram.decode(unigram.encode(texts).to_tensor())

    assert _strings(round_trip(tf.constant(SAMPLE))) == [_nfkc(t) for t in SAMPLE]
    dataset = tf.data.Dataset.from_tensor_slices(SAMPLE).batch(3).map(unigram.encode)
    rows = [row for batch in dataset for row in batch.to_list()]
    assert rows == unigram.encode(tf.constant(SAMPLE)).to_list()


def test_missing_tensorflow_text_is_one_line_naming_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow_text", None)
    with pytest.raises(ImportError) as error:
        sentencepiece_tokenizer.import_tensorflow_text()
    message = str(error.value)
    assert "\n" not in message
    assert message.endswith(f"pip install 'tensorflow-text~={'.'.join(tf.__version__.split('.')[:2])}.0'")


@pytest.mark.slow  # a SavedModel export and a fresh TensorFlow process: ~20 s
def test_saved_model_runs_with_only_tensorflow_and_tensorflow_text(tmp_path, unigram, bpe):
    class Holder(tf.Module):
        def __init__(self):
            super().__init__()
            self.source = unigram
            self.target = bpe

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def round_trip(self, texts):
            return self.target.decode(self.target.encode(texts).to_tensor())

    export_dir = str(tmp_path / "saved")
    tf.saved_model.save(Holder(), export_dir)
    script = textwrap.dedent(
        f"""
        import importlib.util, os, sys
        sys.modules["zoo"] = None  # any import of zoo or keras now fails
        sys.modules["keras"] = None
        import tensorflow as tf
        # What TF Serving links in: TensorFlow Text's kernels. (The tensorflow_text Python
        # package itself imports keras for its Keras layers, so load its op library alone.)
        package = importlib.util.find_spec("tensorflow_text").submodule_search_locations[0]
        tf.load_op_library(os.path.join(package, "python", "ops", "_sentencepiece_tokenizer.so"))
        for name in ("zoo", "keras", "tensorflow_text"):
            assert name not in sys.modules or sys.modules[name] is None, name
        m = tf.saved_model.load({export_dir!r})
        texts = tf.constant({SAMPLE!r})
        print(m.round_trip(texts).numpy().tolist())
        print(m.source.encode(texts).to_list())
        print(m.source.tokenize(texts).to_list())
        print(m.source.decode(tf.constant([[2, 300, 3, 5]], tf.int64)).numpy().tolist())
        print(m.target.id_to_token(tf.constant([[1, 4]])).numpy().tolist())
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().split("\n")
    texts = tf.constant(SAMPLE)
    assert lines[0] == str([_nfkc(t).encode() for t in SAMPLE])
    assert lines[1] == str(unigram.encode(texts).to_list())
    assert lines[2] == str(unigram.tokenize(texts).to_list())
    assert lines[3] == str(unigram.decode(tf.constant([[2, 300, 3, 5]])).numpy().tolist())
    assert lines[4] == str([[b"<unk>", b"<0x00>"]])


def test_sentences_over_4192_bytes_are_learned_from():
    # SentencePiece's trainer skips longer ones without a word (its default max_sentence_length): their words
    # were spelt in bytes, and a corpus of only such lines failed with "INTERNAL: ... [!sentences_.empty()]".
    long_line = ("zyxwvut " * 800)[:6000]
    tok = SentencePieceTokenizer.build(["abc def ghi"] * 20 + [long_line] * 5, max_size=280)
    assert "z" in tok.vocab and "▁zyxwvut" in tok.vocab
    only_long = SentencePieceTokenizer.build(["mot " * 2000] * 3, max_size=300)
    assert "▁mot" in only_long.vocab
