"""benchmarks/decode.py --bleu scores with the workdir's sacreBLEU tokenizer, as zoo-eval does."""

import json
import os
import subprocess
import sys

import ml_collections
import pytest
from sacrebleu.metrics import BLEU

from tests.export.export_test_model import SOURCE_TEXTS, TARGET_TEXTS, tiny_model, write_workdir
from zoo.data import CharTokenizer
from zoo.inference import KerasTranslator
from zoo.models.workdir import source_cap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
@pytest.mark.parametrize("max_source_length", [None, 3])  # 3: a training cap the export reads past (source_cap)
def test_bleu_uses_the_bleu_tokenize_and_source_length_of_the_workdir(tmp_path, max_source_length):
    source_tokenizer, target_tokenizer = CharTokenizer.build(SOURCE_TEXTS), CharTokenizer.build(TARGET_TEXTS)
    model = tiny_model(source_tokenizer, target_tokenizer)
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer,
                            {"bleu_tokenize": "char", "max_source_length": max_source_length or 0})
    references = [target[:-1] + "9" for target in TARGET_TEXTS[:3]] + TARGET_TEXTS[3:]  # not all translated right
    tsv = tmp_path / "test.tsv"
    tsv.write_text("".join(f"{s}\t{t}\n" for s, t in zip(SOURCE_TEXTS, references)), encoding="utf-8")
    cap = source_cap(ml_collections.ConfigDict({"max_source_length": max_source_length or 0}))  # as the export
    assert cap > max(len(text) for text in SOURCE_TEXTS)
    hypotheses = KerasTranslator(model, source_tokenizer, target_tokenizer, cap).translate(SOURCE_TEXTS)
    char_bleu = round(BLEU(tokenize="char").corpus_score(hypotheses, [references]).score, 2)
    assert char_bleu != round(BLEU().corpus_score(hypotheses, [references]).score, 2)  # the test tells them apart

    command = [sys.executable, os.path.join(ROOT, "benchmarks", "decode.py"), f"--workdir={workdir}", f"--tsv={tsv}",
               "--bleu", "--sentences=0", "--modes=graph", "--batch_sizes=8", "--beam_widths=2", "--repeats=1",
               "--nosampling"]
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout)
    rows = {row["search"]: row for row in report["results"]}
    assert rows["greedy"]["bleu"] == char_bleu
    assert report["bleu_tokenize"] == "char" and report["max_source_length"] == cap
