"""benchmarks/train.py end to end on the dates recipe: its JSON and the peak fraction's arithmetic."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _train_benchmark(tmp_path, *flags):
    output = tmp_path / "train.json"
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "train.py"), "--recipe=dates_bahdanau",
               "--batch_size=8", "--warmup_steps=1", "--steps=2", f"--output={output}", *flags]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert json.loads(finished.stdout) == json.loads(output.read_text())
    return json.loads(output.read_text())


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One run of the benchmark, two precisions, each profiled: the tests below read parts of it."""
    tmp_path = tmp_path_factory.mktemp("train_benchmark")
    report = _train_benchmark(tmp_path, "--precision=float32,mixed_bfloat16", "--profile_steps=2",
                              f"--profile_dir={tmp_path / 'trace'}")
    return tmp_path, report


@pytest.mark.slow
def test_train_benchmark_reports_tokens_flops_and_peak_fraction(report):
    _, report = report
    assert report["recipe"] == "dates_bahdanau" and report["batch_size"] == 8 and report["steps"] == 2
    assert report["cpu_count"] == os.cpu_count() and len(report["load_average"]) == 3
    assert report["machine"]["cpu_count"] == os.cpu_count() and report["machine"]["cpu_model"]
    assert [run["precision"] for run in report["runs"]] == ["float32", "mixed_bfloat16"]
    for run in report["runs"]:
        assert run["model_flops_per_token"] > 0 and run["matmul_peak_gflops"] > 0
        terms = run["model_flops_per_token_by_term"]
        assert {"encoder", "decoder_rnn", "attention", "output_projection"} <= set(terms)
        assert sum(terms.values()) == pytest.approx(run["model_flops_per_token"])
        assert run["train_tokens_per_second"] == pytest.approx(run["tokens_per_step"] * 2 / run["seconds"])
        flops = run["train_tokens_per_second"] * run["model_flops_per_token"]
        assert run["peak_fraction"] == pytest.approx(flops / (run["matmul_peak_gflops"] * 1e9))
        shares = run["cpu_shares"]  # of the timed steps: busy, idle and the hypervisor's
        assert shares is None or (shares["busy"] > 0 and 0 <= shares["steal_of_demand"] <= 1)
    # One model, one set of batches: the FLOPs per token do not depend on the precision.
    assert report["runs"][0]["model_flops_per_token"] == report["runs"][1]["model_flops_per_token"]


@pytest.mark.slow
def test_train_benchmark_counts_the_output_projection_of_a_sampled_vocabulary(report, tmp_path):
    whole = report[1]["runs"][0]  # float32 over every id, as this run but for the flag
    run = _train_benchmark(tmp_path, "--precision=float32", "--sampled_vocabulary=8")["runs"][0]
    assert "sampled_vocabulary_mean_ids" not in whole and run["sampled_vocabulary_mean_ids"] >= 8
    terms, whole_terms = run["model_flops_per_token_by_term"], whole["model_flops_per_token_by_term"]
    vocab = whole_terms["output_projection"] / terms["output_projection"] * run["sampled_vocabulary_mean_ids"]
    assert 8 < vocab == pytest.approx(round(vocab))  # the whole vocabulary's term, scaled by M / V
    assert sum(terms.values()) == pytest.approx(run["model_flops_per_token"]) and terms["encoder"] == whole_terms[
        "encoder"]


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1], ids=["float32", "mixed_bfloat16"])
def test_train_benchmark_profiles_the_timed_batches(report, index):
    tmp_path, report = report
    run = report["runs"][index]
    profile = run["profile"]
    assert profile["steps"] == 2 and profile["cores"] == os.cpu_count()
    assert os.path.isfile(profile["trace"]) and profile["trace"].startswith(str(tmp_path / "trace"))
    regions, cores = profile["op_ms_per_step_by_region"], profile["core_ms_per_step"]
    assert sum(regions.values()) == pytest.approx(cores["ops"], abs=0.05)
    # RNNsearch: a bidirectional encoder loop and a decoder loop, each with a backward pass
    assert all(ms > 0 for ms in regions.values()), regions
    assert sum(cores.values()) == pytest.approx(profile["wall_ms_per_step"] * profile["cores"], rel=0.01)
    assert 0 < sum(profile["product_ms_per_step"].values()) < cores["ops"]
    products_seconds = sum(profile["product_ms_per_step"].values()) / 1000 / profile["cores"]
    assert profile["peak_fraction_if_only_products_ran"] == pytest.approx(
        run["model_flops_per_token"] * run["tokens_per_step"] / (run["matmul_peak_gflops"] * 1e9 * products_seconds),
        rel=1e-3)
    threads = profile["threads_running_ops_ms_per_step"]
    assert 0 < sum(threads.values()) <= profile["wall_ms_per_step"] * 1.01  # from the first op to the last
    assert sum(profile["one_thread_ms_per_step_by_region"].values()) == pytest.approx(threads["one"], abs=0.05)
    assert "Tanh" in profile["op_ms_per_step_by_type"] or len(profile["op_ms_per_step_by_type"]) == 15


@pytest.mark.parametrize("flag, message", [
    ("--precision=float32,float64", "--precision=float32,float64: expected one or more of"),
    ("--strategy=nosuch", "--strategy=nosuch: expected one or more of"),
    ("--jit_compile=maybe", "--jit_compile=maybe: expected one or more of"),
    ("--steps=0", "--steps=0: expected an integer >= 1"),
    ("--batch_size=0", "--batch_size=0: expected an integer >= 1"),
    ("--train_tsv=no/such.tsv", "--train_tsv=no/such.tsv: no such file"),
    ("--recipe=nosuch", "--recipe=nosuch: unknown recipe 'nosuch'"),
    ("--profile_steps=101", "--profile_steps=101: at most --steps (100)"),
    ("--sampled_vocabulary=-1", "--sampled_vocabulary=-1: expected an integer >= 0"),
])
def test_train_benchmark_names_a_bad_flag(flag, message):
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "train.py"), "--recipe=dates_bahdanau", flag]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert finished.returncode != 0
    assert message in finished.stderr.strip().splitlines()[-1]
    assert "Traceback" not in finished.stderr
