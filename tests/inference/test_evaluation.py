"""`zoo-eval`'s scoring: a TSV line's further columns are further references, scored as sacreBLEU scores them."""

import pytest
import sacrebleu

from zoo.inference import evaluation

TRANSLATIONS = {
    "le chat est sur le tapis": "the cat sits on the mat",
    "il pleut": "it rains today",
    "bonjour": "good morning",
}
FIRST = ["the cat is on the mat", "it is raining", "hello"]
SECOND = ["there is a cat on the mat", "it rains", "good morning"]


def test_zoo_eval_scores_several_references_as_sacrebleu_does(tmp_path, monkeypatch):
    def load_translate_fn(path, beam_width=None, shortlist=None):
        return (lambda batch: [TRANSLATIONS[s.decode()].encode() for s in batch]), "a dictionary"

    monkeypatch.setattr(evaluation, "load_translate_fn", load_translate_fn)
    tsv = tmp_path / "test.tsv"
    tsv.write_text("".join(f"{s}\t{a}\t{b}\n" for s, a, b in zip(TRANSLATIONS, FIRST, SECOND)), encoding="utf-8")
    scores = evaluation.evaluate_model(str(tmp_path), str(tsv), batch_size=2, bleu_tokenize="13a")
    hypotheses = list(TRANSLATIONS.values())
    assert scores["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [FIRST, SECOND]).score)
    assert scores["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hypotheses, [FIRST, SECOND]).score)
    assert scores["bleu"] > sacrebleu.corpus_bleu(hypotheses, [FIRST]).score  # the second column counted
    assert "nrefs:2" in scores["bleu_signature"] and "nrefs:2" in scores["chrf_signature"]
    assert scores["exact_match"] == pytest.approx(1 / 3) and scores["sentences"] == 3


def test_zoo_eval_refuses_an_unknown_bleu_tokenizer_before_it_translates(tmp_path, monkeypatch):
    def load_translate_fn(path, beam_width=None, shortlist=None):
        raise AssertionError("the model was loaded (and the test set translated) before the tokenizer was checked")

    monkeypatch.setattr(evaluation, "load_translate_fn", load_translate_fn)
    tsv = tmp_path / "test.tsv"
    tsv.write_text("bonjour\thello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown BLEU tokenizer 'bogus', expected one of \[.*'13a'"):
        evaluation.evaluate_model(str(tmp_path), str(tsv), bleu_tokenize="bogus")
    (tmp_path / "config.json").write_text('{"bleu_tokenize": "bogus"}')  # the one the model was trained with
    with pytest.raises(ValueError, match=r"unknown BLEU tokenizer 'bogus'"):
        evaluation.evaluate_model(str(tmp_path), str(tsv))
