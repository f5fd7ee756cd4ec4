"""zoo.metrics: sacreBLEU BLEU/chrF, signatures and exact match."""

import pytest
from sacrebleu.metrics import BLEU, CHRF

from zoo import metrics


def test_identical_corpus_scores_100():
    scores = metrics.score(["the cat sat on the mat", "hello world"], ["the cat sat on the mat", "hello world"])
    assert scores.bleu == pytest.approx(100.0)
    assert scores.chrf == pytest.approx(100.0)
    assert scores.exact_match == 1.0
    assert scores.sentences == 2


def test_matches_sacrebleu_and_records_the_tokenizer():
    hypotheses = ["1999-01-02", "2021-03-03", "1950-12-31"]
    references = ["1999-01-03", "2021-03-03", "1950-11-30"]
    scores = metrics.score(hypotheses, references, bleu_tokenize="char")
    assert scores.bleu == pytest.approx(BLEU(tokenize="char").corpus_score(hypotheses, [references]).score)
    assert scores.chrf == pytest.approx(CHRF().corpus_score(hypotheses, [references]).score)
    assert "tok:char" in scores.bleu_signature
    assert scores.chrf_signature.startswith("nrefs:1")
    assert scores.exact_match == pytest.approx(1 / 3)
    assert "tok:13a" in metrics.score(hypotheses, references).bleu_signature
    assert 0 < scores.bleu < 100


def test_exact_match_ignores_surrounding_whitespace_only():
    assert metrics.exact_match([" a b ", "a  b", "x"], ["a b", "a b", "y"]) == pytest.approx(1 / 3)
    assert metrics.exact_match([], []) == 0.0


def test_bad_arguments_say_what_was_expected():
    with pytest.raises(ValueError, match="2 hypotheses and 1 references"):
        metrics.score(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="unknown BLEU tokenizer 'nope'"):
        metrics.score(["a"], ["a"], bleu_tokenize="nope")
    with pytest.raises(ValueError, match="empty"):
        metrics.score([], [])


def test_as_dict_has_every_field():
    fields = metrics.score(["a b c d"], ["a b c d"]).as_dict()
    assert set(fields) == {"bleu", "chrf", "exact_match", "bleu_signature", "chrf_signature", "sentences"}


def test_multi_reference_bleu_and_chrf_equal_sacrebleus_own():
    # By hand: against either reference, 4/4 unigrams, 3/3 bigrams, 2/2 trigrams match, no
    # 4-gram does (exp smoothing counts it 1/2): BLEU = 100 * (1 * 1 * 1 * 0.5) ** (1 / 4).
    hypotheses = ["a b c d", "the cat is on the mat"]
    first = ["a b c e", "the cat sat on the mat"]
    second = ["x b c d", "there is a cat on the mat"]
    scores = metrics.score(hypotheses[:1], [(first[0], second[0])])
    assert scores.bleu == pytest.approx(100 * 0.5**0.25)
    scores = metrics.score(hypotheses, list(zip(first, second)))
    bleu, chrf = BLEU(), CHRF()
    assert scores.bleu == pytest.approx(bleu.corpus_score(hypotheses, [first, second]).score)
    assert scores.chrf == pytest.approx(chrf.corpus_score(hypotheses, [first, second]).score)
    assert scores.bleu_signature == str(bleu.get_signature()) and "nrefs:2|" in scores.bleu_signature
    assert scores.chrf_signature.startswith("nrefs:2|")
    assert scores.bleu > metrics.score(hypotheses, first).bleu  # a second reference can only help


def test_a_varying_number_of_references_is_nrefs_var():
    hypotheses = ["a b c d", "e f g h"]
    references = [["a b c d", "a b"], ["e f g x"]]
    scores = metrics.score(hypotheses, references)
    expected = BLEU().corpus_score(hypotheses, [["a b c d", "e f g x"], ["a b", None]])
    assert scores.bleu == pytest.approx(expected.score)
    assert "nrefs:var|" in scores.bleu_signature
    assert metrics.exact_match([" a b ", "x"], [("z", "a b"), ["y"]]) == 0.5
    with pytest.raises(ValueError, match=r"sentence 1: expected one or more str references, got \(\)"):
        metrics.score(hypotheses, [["a"], []])


def test_a_tokenizer_that_cannot_load_here_is_refused_before_scoring_or_training(tmp_path, monkeypatch):
    from urllib.error import URLError

    from sacrebleu.tokenizers import tokenizer_spm

    from recipes.registry import load_config
    from zoo.config_checks import validate_config

    def download_file(url, path):  # a machine without network: flores200 fetches its SentencePiece model
        raise URLError("Name or service not known")

    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(tmp_path))  # nothing downloaded before
    monkeypatch.setattr(tokenizer_spm, "download_file", download_file)
    message = r"sacreBLEU cannot load BLEU tokenizer 'flores200' here \(<urlopen error Name or service not known>\)"
    with pytest.raises(ValueError, match=message):
        metrics.check_bleu_tokenize("flores200")
    config = load_config("dates_bahdanau")
    config.bleu_tokenize = "flores200"
    with pytest.raises(ValueError, match=rf"invalid config: bleu_tokenize='flores200': {message}"):
        validate_config(config)
    config.bleu_tokenize = "char"
    validate_config(config)
