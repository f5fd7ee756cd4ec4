"""OpenNMT-py 3.5.1, the peer toolkit, on the reference model, for a wall-clock budget.

A benchmark, never a dependency or a test: it sets up OpenNMT-py in its own virtual
environment (PyPI's torch 2.2.2 wheel with numpy<2, which that torch needs), trains
SentencePiece 8k per side on the training source and target, trains the reference model
for `--minutes` of wall clock, decodes the dev and test sets with beam 5 and greedy, scores
them with sacreBLEU against the raw references, and prints one JSON object (also written
to `--out`).

The reference model (docs/performance.md, "Quality per step"): bidirectional LSTM encoder 2 x 256 (one
layer, 256 per direction), LSTM decoder 512, Luong general attention with input feeding,
embeddings 256, Adam 1e-3 constant, gradient norm clip 5, 64 sentences per batch, loss
normalised per sentence, uniform +-0.1 initialisation, dropout 0.3 (OpenNMT-py's default).

    python benchmarks/peers/opennmt_py.py --corpus DIR --minutes 20 \
        --workdir runs/peer_onmt --out benchmarks/results/peer_opennmt_py.json

DIR holds {train,dev,test}.tsv (`source<TAB>target`), as written by
`make_debian_corpus.py`. Training is stopped at the budget with SIGTERM; the newest
checkpoint (saved every `--save_every` steps) is the one decoded, so up to that many
steps of the budget are not counted in `steps`. The JSON also holds the learning curves:
the training cross-entropy of every progress report (`loss_curve`) and the greedy BLEU of
the first `--curve_sentences` dev sentences at every `--curve_every` steps (`dev_curve`),
as the zoo's own dev evaluations score them. `--reuse_training` decodes and scores the
checkpoints of a finished run in `--workdir` again, without training.
"""

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import sacrebleu

PINS = ["torch==2.2.2", "numpy<2", "OpenNMT-py==3.5.1", "sentencepiece>=0.2", "sacrebleu>=2.4"]

_TRAIN_SPM = """
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[2], vocab_size=int(sys.argv[3]),
    model_type="unigram", character_coverage=1.0, input_sentence_size=2000000, shuffle_input_sentence=True)
"""
_ENCODE = """
import sys, sentencepiece as spm
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f, open(sys.argv[3], "w", encoding="utf-8") as out:
    for line in f:
        out.write(" ".join(sp.encode(line.rstrip("\\n"), out_type=str)) + "\\n")
"""
_DECODE = """
import sys, sentencepiece as spm
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f, open(sys.argv[3], "w", encoding="utf-8") as out:
    for line in f:
        out.write(sp.decode(line.split()) + "\\n")
"""


def ensure_venv(venv):
    """Creates the peer's virtual environment with the pinned packages (once)."""
    if os.path.exists(os.path.join(venv, "bin", "onmt_train")):
        return
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", *PINS], check=True)


def split_tsv(tsv, source_path, target_path):
    """Writes the first two columns of a TSV file as two aligned text files; returns the references."""
    references = []
    with open(tsv, encoding="utf-8") as f, open(source_path, "w", encoding="utf-8") as src, \
            open(target_path, "w", encoding="utf-8") as tgt:
        for line in f:
            columns = line.rstrip("\n").split("\t")
            src.write(columns[0] + "\n")
            tgt.write(columns[1] + "\n")
            references.append(columns[1])
    return references


def prepare(args, python):
    """SentencePiece models per side and the subword-encoded train/dev/test files."""
    data = os.path.join(args.workdir, "data")
    os.makedirs(data, exist_ok=True)
    references = {}
    for split in ("train", "dev", "test"):
        references[split] = split_tsv(os.path.join(args.corpus, f"{split}.tsv"),
                                      os.path.join(data, f"{split}.src"), os.path.join(data, f"{split}.tgt"))
    for side in ("src", "tgt"):
        prefix = os.path.join(data, f"spm_{side}")
        if not os.path.exists(prefix + ".model"):
            subprocess.run([python, "-c", _TRAIN_SPM, os.path.join(data, f"train.{side}"), prefix,
                            str(args.vocab_size)], check=True, capture_output=True)
        for split in ("train", "dev", "test"):
            subprocess.run([python, "-c", _ENCODE, prefix + ".model", os.path.join(data, f"{split}.{side}"),
                            os.path.join(data, f"{split}.sp.{side}")], check=True)
    return data, references


def write_config(args, data):
    """The OpenNMT-py YAML config of the reference model."""
    run = os.path.join(args.workdir, "run")
    os.makedirs(run, exist_ok=True)
    lines = [
        f"save_data: {run}/vocab",
        f"src_vocab: {run}/vocab.src",
        f"tgt_vocab: {run}/vocab.tgt",
        f"src_vocab_size: {args.vocab_size}",
        f"tgt_vocab_size: {args.vocab_size}",
        "overwrite: true",
        "data:",
        "  corpus_1:",
        f"    path_src: {data}/train.sp.src",
        f"    path_tgt: {data}/train.sp.tgt",
        "  valid:",
        f"    path_src: {data}/dev.sp.src",
        f"    path_tgt: {data}/dev.sp.tgt",
        f"save_model: {run}/model",
        f"save_checkpoint_steps: {args.save_every}",
        "keep_checkpoint: -1",  # all: the learning curve decodes several
        f"seed: {args.seed}",
        "train_steps: 1000000",
        "valid_steps: 1000000",  # no in-training validation: the budget goes to training
        "report_every: 10",
        "bucket_size: 50000",  # about one epoch; the default 262144 stalls on a corpus this size
        "encoder_type: brnn",
        "layers: 1",
        "enc_hid_size: 512",  # both directions together: 256 each
        "dec_hid_size: 512",
        "word_vec_size: 256",
        "rnn_type: LSTM",
        "global_attention: general",
        "input_feed: 1",
        "dropout: [0.3]",
        "optim: adam",
        "learning_rate: 0.001",
        "decay_method: none",
        "start_decay_steps: 100000000",
        "max_grad_norm: 5",
        "batch_type: sents",
        "batch_size: 64",
        "normalization: sents",
        "param_init: 0.1",
        "src_seq_length: 100",
        "tgt_seq_length: 100",
    ]
    path = os.path.join(run, "config.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return run, path


def train(args, venv, run, config):
    """Builds the vocabularies, trains until the budget ends; returns the log and peak RSS (MiB)."""
    subprocess.run([os.path.join(venv, "bin", "onmt_build_vocab"), "-config", config, "-n_sample", "-1"],
                   check=True, capture_output=True)
    log_path = os.path.join(run, "train.log")
    start = time.time()
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen([os.path.join(venv, "bin", "onmt_train"), "-config", config],
                                   stdout=log, stderr=subprocess.STDOUT)
        while process.poll() is None and time.time() - start < args.minutes * 60:
            time.sleep(1)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        _, _, usage = os.wait4(process.pid, 0)
    seconds, peak_rss_mib = time.time() - start, usage.ru_maxrss / 1024
    with open(os.path.join(run, "train_meta.json"), "w", encoding="utf-8") as f:
        json.dump({"train_seconds": seconds, "peak_rss_mib": peak_rss_mib}, f)
    with open(log_path, encoding="utf-8") as f:
        return f.read(), peak_rss_mib, seconds


def trained(run):
    """`train`'s answer for a finished run of `--workdir` (`--reuse_training`): its log and figures.

    A run from before `train_meta.json` was written gives the last reported elapsed seconds and
    no peak RSS (None).
    """
    with open(os.path.join(run, "train.log"), encoding="utf-8") as f:
        log = f.read()
    meta_path = os.path.join(run, "train_meta.json")
    if os.path.isfile(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        return log, meta["peak_rss_mib"], meta["train_seconds"]
    elapsed = re.findall(r"tok/s;\s*(\d+) sec", log)
    return log, None, float(elapsed[-1]) if elapsed else None


def training_stats(log):
    """Steps reached and mean source+target tokens/s from OpenNMT-py's progress reports."""
    reports = re.findall(r"Step (\d+)/.*?(\d+)/\s*(\d+) tok/s", log)
    if not reports:
        raise RuntimeError("OpenNMT-py reported no training step; see its train.log")
    rates = [int(src) + int(tgt) for _, src, tgt in reports]
    return int(reports[-1][0]), sum(rates) / len(rates)


def loss_curve(log):
    """`[(step, training cross-entropy per target token)]` of OpenNMT-py's progress reports (ln of its ppl)."""
    return [(int(step), round(math.log(float(ppl)), 3)) for step, ppl in re.findall(r"Step (\d+)/.*?ppl:\s*([\d.]+)", log)]


def translate_and_score(venv, python, data, run, checkpoint, split, beam, references, limit=0):
    """Decodes one split (its first `limit` sentences; 0 = all) with one beam width; returns sacreBLEU and chrF."""
    tag = f"{split}.beam{beam}" + (f".first{limit}.{os.path.basename(checkpoint)}" if limit else "")
    pieces, hypotheses = os.path.join(run, f"{tag}.sp"), os.path.join(run, f"{tag}.txt")
    source = os.path.join(data, f"{split}.sp.src")
    if limit:
        with open(source, encoding="utf-8") as f:
            lines = f.readlines()[:limit]
        source, references = os.path.join(run, f"{tag}.src"), references[:limit]
        with open(source, "w", encoding="utf-8") as f:
            f.writelines(lines)
    start = time.time()
    subprocess.run([os.path.join(venv, "bin", "onmt_translate"), "-model", checkpoint,
                    "-src", source, "-output", pieces, "-beam_size", str(beam),
                    "-batch_size", "64", "-max_length", "100"], check=True, capture_output=True)
    seconds = time.time() - start
    subprocess.run([python, "-c", _DECODE, os.path.join(data, "spm_tgt.model"), pieces, hypotheses], check=True)
    with open(hypotheses, encoding="utf-8") as f:
        output = [line.rstrip("\n") for line in f]
    bleu_metric, chrf_metric = sacrebleu.metrics.BLEU(), sacrebleu.metrics.CHRF()
    bleu = bleu_metric.corpus_score(output, [references])
    chrf = chrf_metric.corpus_score(output, [references])
    return {"bleu": round(bleu.score, 2), "chrf": round(chrf.score, 2), "signature": str(bleu_metric.get_signature()),
            "sentences_per_second": round(len(output) / seconds, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="directory with train.tsv, dev.tsv, test.tsv")
    parser.add_argument("--minutes", type=float, default=20.0, help="wall-clock training budget")
    parser.add_argument("--workdir", default="runs/peer_opennmt_py", help="scratch directory")
    parser.add_argument("--venv", default="runs/peer_opennmt_py_venv", help="OpenNMT-py's virtual environment")
    parser.add_argument("--vocab_size", type=int, default=8000, help="SentencePiece pieces per side")
    parser.add_argument("--save_every", type=int, default=50, help="checkpoint interval in steps")
    parser.add_argument("--curve_every", type=int, default=200,
                        help="dev BLEU (greedy) of the checkpoints at multiples of this many steps")
    parser.add_argument("--curve_sentences", type=int, default=500, help="dev sentences of each curve point")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="", help="also write the JSON here")
    parser.add_argument("--reuse_training", action="store_true",
                        help="decode and score the checkpoints a finished run left in --workdir (no training)")
    args = parser.parse_args()
    for split in ("train", "dev", "test"):
        if not os.path.isfile(os.path.join(args.corpus, f"{split}.tsv")):
            parser.error(f"--corpus {args.corpus}: no {split}.tsv there")
    ensure_venv(args.venv)
    python = os.path.join(args.venv, "bin", "python")
    data, references = prepare(args, python)
    run, config = write_config(args, data)
    if args.reuse_training:
        log, peak_rss_mib, train_seconds = trained(run)
    else:
        log, peak_rss_mib, train_seconds = train(args, args.venv, run, config)
    steps, tokens_per_second = training_stats(log)
    checkpoints = sorted((int(m.group(1)), name) for name in os.listdir(run)
                         if (m := re.fullmatch(r"model_step_(\d+)\.pt", name)))
    if not checkpoints:
        raise RuntimeError(f"no checkpoint in {run}: raise --minutes or lower --save_every")
    checkpoint_step, name = checkpoints[-1]
    result = {
        "toolkit": "OpenNMT-py 3.5.1 (torch 2.2.2, CPU)",
        "corpus": os.path.abspath(args.corpus),
        "budget_minutes": args.minutes,
        "train_seconds": None if train_seconds is None else round(train_seconds, 1),
        "steps_reported": steps,
        "steps": checkpoint_step,
        "train_tokens_per_second": round(tokens_per_second),
        "peak_rss_mib": None if peak_rss_mib is None else round(peak_rss_mib),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
        "loss_curve": loss_curve(log),
        # BLEU against steps, scored as the zoo scores its dev set during training.
        "dev_curve": [(step, translate_and_score(args.venv, python, data, run, os.path.join(run, checkpoint), "dev",
                                                 1, references["dev"], args.curve_sentences)["bleu"])
                      for step, checkpoint in checkpoints if args.curve_every and step % args.curve_every == 0],
    }
    for split in ("dev", "test"):
        for beam in (5, 1):
            key = f"{split}_{'beam5' if beam == 5 else 'greedy'}"
            result[key] = translate_and_score(args.venv, python, data, run, os.path.join(run, name), split, beam,
                                              references[split])
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
