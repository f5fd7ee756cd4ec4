"""Tokenizers: exact tokens, round trips, odd inputs, save/load and SavedModel export."""

import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

from zoo.data import CharTokenizer, WordTokenizer, build_tokenizer, load_tokenizer, vocabulary
from zoo.data.word_tokenizer import JOINER

J = JOINER


def _strings(tensor):
    return [s.decode("utf-8") for s in tensor.numpy().tolist()]


def _tokens(ragged):
    return [[t.decode("utf-8") for t in row] for row in ragged.to_list()]


TEXTS = [
    "Hello, world!",
    "« Bonjour » l’homme, 03.03.21...",
    "Quoi?! (oui) «non»",
    "2021-03-03",
    "Il a dit: « c'est 3,5 % » ; fin.",
]


@pytest.fixture(scope="module")
def word():
    return WordTokenizer.build(TEXTS)


@pytest.fixture(scope="module")
def char():
    return CharTokenizer.build(TEXTS + ["こんにちは 👍"])


def test_word_tokens_split_punctuation_with_joiners(word):
    tokens = _tokens(word.tokenize(tf.constant(["l’homme, 03.03.21", "« Bonjour »", "«Bonjour»!"])))
    assert tokens == [
        ["l", f"{J}’{J}", "homme", f"{J},", "03", f"{J}.{J}", "03", f"{J}.{J}", "21"],
        ["«", "Bonjour", "»"],
        [f"«{J}", "Bonjour", f"{J}»", f"{J}!"],
    ]


def test_word_round_trip_is_exact(word):
    decoded = _strings(word.decode(word.encode(tf.constant(TEXTS)).to_tensor()))
    assert decoded == TEXTS


def test_word_punctuation_keeps_its_spacing():
    # Spaced and glued punctuation are different tokens, so either spacing comes back.
    texts = ["Hello , world !", "Hello, world!", "2021 - 03 - 03", "2021-03-03"]
    tok = WordTokenizer.build(texts)
    assert sorted(tok.vocab[4:]) == sorted(
        ["!", ",", "-", "03", "2021", "Hello", "world", f"{J}!", f"{J},", f"{J}-{J}"]
    )
    assert _strings(tok.decode(tok.encode(tf.constant(texts)))) == texts


def test_vocab_order_is_reserved_then_frequency_then_alphabetical():
    tok = WordTokenizer.build(["b a a", "c b a", "z y"])
    assert tok.vocab == list(vocabulary.RESERVED_TOKENS) + ["a", "b", "c", "y", "z"]
    assert tok.vocab_size == 9
    assert WordTokenizer.build(["b a a", "c b a", "z y"], max_size=6).vocab[4:] == ["a", "b"]
    assert WordTokenizer.build(["b a a", "c b a", "z y"], min_count=2).vocab[4:] == ["a", "b"]


def test_min_count_that_leaves_no_token_is_refused_naming_the_most_frequent():
    # Only the reserved tokens would be left: every text would encode as <unk>.
    for cls in (WordTokenizer, CharTokenizer):
        with pytest.raises(ValueError, match=r"min_count=5 times .*expected min_count <= 3"):
            cls.build(["a a", "a"], min_count=5)


def test_one_string_instead_of_texts_is_refused():
    # A str is an iterable of str: it would build a vocabulary of its characters.
    for kind in ("word", "char", "sentencepiece"):
        with pytest.raises(TypeError, match=r"expected texts as an iterable of str, got one str: 'hello world'"):
            build_tokenizer(kind, "hello world")


def test_unknown_words_map_to_unk_and_decode_as_unk(word):
    ids = word.encode(tf.constant(["Hello zebra!"]))
    assert ids.to_list() == [[word.vocab.index("Hello"), vocabulary.UNK_ID, word.vocab.index(f"{J}!")]]
    assert _strings(word.decode(ids)) == ["Hello <unk>!"]


def test_empty_whitespace_emoji_and_other_scripts(word, char):
    texts = tf.constant(["", " \t\n\u00a0 ", "日本語 👍", "Hello\u2028world"])
    assert word.encode(texts).to_list() == [
        [],
        [],
        [vocabulary.UNK_ID, vocabulary.UNK_ID],
        [word.vocab.index("Hello"), word.vocab.index("world")],
    ]
    assert _strings(word.decode(word.encode(texts))) == ["", "", "<unk> <unk>", "Hello world"]
    # Character level: seen characters round-trip, unseen ones are <unk> each.
    assert _strings(char.decode(char.encode(tf.constant(["こんにちは 👍", "日本"])))) == [
        "こんにちは 👍",
        "<unk><unk>",
    ]
    assert char.encode(tf.constant(["", "   "])).to_list() == [[], []]


def test_invalid_utf8_does_not_fail(word, char):
    texts = tf.constant([b"Hello \xff world", b"caf\xc3"])
    assert _strings(word.decode(word.encode(texts))) == ["Hello <unk> world", "<unk> <unk>"]  # caf + U+FFFD
    assert char.encode(texts).row_lengths().numpy().tolist() == [13, 4]


def test_very_long_input(word):
    text = " ".join(["Hello, world!"] * 5000)
    ids = word.encode(tf.constant([text]))
    assert ids.row_lengths().numpy().tolist() == [20000]
    assert _strings(word.decode(ids)) == [text]


def test_char_tokens_show_spaces_as_visible_symbol(char):
    assert _tokens(char.tokenize(tf.constant(["a  b\tc"]))) == [["a", "▁", "b", "▁", "c"]]
    assert " " not in char.vocab and "▁" in char.vocab
    decoded = _strings(char.decode(char.encode(tf.constant(TEXTS))))
    assert decoded == TEXTS


def test_lowercase_option():
    tok = WordTokenizer.build(["Hello WORLD", "ÉCOLE"], lowercase=True)
    assert tok.vocab[4:] == ["hello", "world", "école"]
    assert tok.encode(tf.constant(["HELLO World École"])).to_list() == [[4, 5, 6]]
    upper_char = CharTokenizer.build(["AB"], lowercase=False)
    lower_char = CharTokenizer.build(["AB"], lowercase=True)
    assert upper_char.vocab[4:] == ["A", "B"] and lower_char.vocab[4:] == ["a", "b"]


def test_decode_stops_at_eos_and_drops_pad_and_bos(word):
    hello, world = word.vocab.index("Hello"), word.vocab.index("world")
    pad, bos, eos = vocabulary.PAD_ID, vocabulary.BOS_ID, vocabulary.EOS_ID
    dense = tf.constant([[bos, hello, pad, world, eos, hello], [hello, eos, eos, world, pad, pad]])
    assert _strings(word.decode(dense)) == ["Hello world", "Hello"]
    assert _strings(word.decode(tf.cast(dense, tf.int64))) == ["Hello world", "Hello"]
    ragged = tf.ragged.constant([[hello, world, eos, hello], [eos, hello], []], dtype=tf.int32)
    assert _strings(word.decode(ragged)) == ["Hello world", "", ""]


def test_id_to_token_keeps_shape_and_maps_out_of_range_to_unk(word):
    tokens = word.id_to_token(tf.constant([[0, 1], [2, 3], [word.vocab_size, -1]]))
    assert tokens.shape == (3, 2)
    assert [_strings(row) for row in tokens] == [["<pad>", "<unk>"], ["<s>", "</s>"], ["<unk>", "<unk>"]]


def test_save_and_load_round_trip(tmp_path, word, char):
    for tok, kind in ((word, "word"), (char, "char")):
        directory = tmp_path / kind
        tok.save(str(directory))
        lines = (directory / "vocab.txt").read_text(encoding="utf-8").split("\n")
        assert lines[:-1] == tok.vocab and lines[-1] == ""
        loaded = load_tokenizer(str(directory))
        assert type(loaded) is type(tok) and loaded.kind == kind
        assert loaded.vocab == tok.vocab and loaded.lowercase == tok.lowercase
        texts = tf.constant(TEXTS)
        assert loaded.encode(texts).to_list() == tok.encode(texts).to_list()
    assert WordTokenizer.load(str(tmp_path / "word")).vocab == word.vocab
    with pytest.raises(ValueError, match="expected a word tokenizer, found a char one"):
        WordTokenizer.load(str(tmp_path / "char"))


def test_load_errors_name_the_file(tmp_path, word):
    with pytest.raises(FileNotFoundError, match="tokenizer.json: no such file"):
        load_tokenizer(str(tmp_path / "missing"))
    word.save(str(tmp_path / "w"))
    (tmp_path / "w" / "tokenizer.json").write_text('{"type": "bpe"}', encoding="utf-8")
    with pytest.raises(ValueError, match="unknown tokenizer type 'bpe'"):
        load_tokenizer(str(tmp_path / "w"))
    for content, problem in ((b"\xff{", "invalid JSON"), (b"[1]", "expected a JSON object, found list"),
                             (b'{"type": ["word"]}', r"unknown tokenizer type \['word'\]"),
                             (b'{"type": "word", "lowercase": "false"}', "lowercase must be true or false, found 'false'")):
        (tmp_path / "w" / "tokenizer.json").write_bytes(content)
        with pytest.raises(ValueError, match=rf"w/tokenizer.json: {problem}"):
            load_tokenizer(str(tmp_path / "w"))


def test_bad_vocab_and_build_arguments_are_rejected():
    with pytest.raises(ValueError, match="must start with the reserved tokens"):
        WordTokenizer(["a", "b"])
    with pytest.raises(ValueError, match="duplicate token 'a'"):
        WordTokenizer(list(vocabulary.RESERVED_TOKENS) + ["a", "a"])
    with pytest.raises(ValueError, match="hold no token"):
        WordTokenizer.build(["", "   "])
    with pytest.raises(ValueError, match="unknown tokenizer type 'bpe'"):
        build_tokenizer("bpe", ["a"])
    assert build_tokenizer("char", ["ab"]).vocab[4:] == ["a", "b"]


@pytest.mark.slow  # a SavedModel export and a fresh TensorFlow process: ~20 s
def test_saved_model_runs_without_zoo(tmp_path, word, char):
    class Holder(tf.Module):
        def __init__(self):
            super().__init__()
            self.source = char
            self.target = word

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def round_trip(self, texts):
            return self.target.decode(self.target.encode(texts).to_tensor())

    export_dir = str(tmp_path / "saved")
    tf.saved_model.save(Holder(), export_dir)
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["zoo"] = None  # any import of zoo now fails
        import tensorflow as tf
        m = tf.saved_model.load({export_dir!r})
        texts = tf.constant({TEXTS!r} + ["Hello zebra!"])
        print(m.round_trip(texts).numpy().tolist())
        print(m.source.decode(m.source.encode(texts)).numpy().tolist())
        print(m.target.tokenize(texts).to_list())
        print(m.target.decode(tf.constant([[2, 4, 3, 5]], tf.int64)).numpy().tolist())
        print(m.target.id_to_token(tf.constant([[1, 4]])).numpy().tolist())
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().split("\n")
    texts = tf.constant(TEXTS + ["Hello zebra!"])
    assert lines[0] == str(word.decode(word.encode(texts)).numpy().tolist())
    assert lines[0] == str([t.encode() for t in TEXTS] + [b"Hello <unk>!"])
    assert lines[1] == str(char.decode(char.encode(texts)).numpy().tolist())
    assert lines[2] == str(word.tokenize(texts).to_list())
    assert lines[3] == str([word.vocab[4].encode()])
    assert lines[4] == str([[b"<unk>", word.vocab[4].encode()]])
