"""benchmarks/decode.py end to end on a small random model: its JSON, in both batch orders."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
@pytest.mark.parametrize("order, batches, masked, repeats", [
    ("--sort_by_length", "length-sorted (as zoo-eval)", False, 3), ("--nosort_by_length", "in file order", True, 1)])
def test_decode_benchmark_times_greedy_and_beam_search(order, batches, masked, repeats):
    flops = masked  # one of the two runs also counts the products' FLOPs
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "decode.py"), "--vocab_size=40", "--source_length=6",
               "--max_length=5", "--batch_sizes=4", "--beam_widths=2", "--modes=graph", "--sentences=8",
               f"--repeats={repeats}", "--nosampling", order] + (["--masked_greedy", "--flops"] if masked else [])
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout)
    assert report["batches"] == batches and report["target_vocab_size"] == 40
    rows = {row["search"]: row for row in report["results"]}
    assert sorted(rows) == ["beam2", "greedy"] + (["greedy_masked"] if masked else [])
    for row in rows.values():
        assert row["sentences"] == 8 and row["sentences_per_second"] > 0
        assert row["mean_best_length"] == 5  # the random model never ends: max_length steps
    assert rows["beam2"]["cost_vs_greedy"] > 0
    for row in rows.values():  # every repeat's time; the fastest is the row's
        assert len(row["repeat_seconds"]) == repeats and min(row["repeat_seconds"]) == row["seconds"]
        assert len(row["repeat_steal_of_demand"]) == repeats  # the hypervisor's share of each repeat
        assert all(share is None or 0 <= share <= 1 for share in row["repeat_steal_of_demand"])
    # The cost over greedy within each repeat (the same sentences: a ratio of seconds), and its median
    beam, greedy = rows["beam2"]["repeat_seconds"], rows["greedy"]["repeat_seconds"]
    paired = rows["beam2"]["paired_costs_vs_greedy"]
    assert paired == pytest.approx([b / g for b, g in zip(beam, greedy)], abs=0.0006) and len(paired) == repeats
    assert rows["greedy"]["paired_costs_vs_greedy"] == [1.0] * repeats
    if flops:  # 8 sentences, 5 steps each: greedy 8 rows a step, beam 2 one row per sentence first, then 2
        assert rows["greedy"]["matmul"]["row_steps"] == 40 and rows["beam2"]["matmul"]["row_steps"] == 8 + 16 * 4
        assert report["matmul_peak_gflops"] > 0
        for row in rows.values():
            matmul = row["matmul"]
            assert matmul["mean_columns"] == 40 and matmul["gflop"] > 0
            assert matmul["peak_fraction"] == pytest.approx(matmul["gflop"] / row["seconds"]
                                                            / report["matmul_peak_gflops"], rel=0.01, abs=0.0006)


def test_paired_median_of_the_repeats():
    script = ("import sys; sys.path.insert(0, 'benchmarks'); import decode; "
              "row = {'sentences': 10, 'repeat_seconds': [2.0, 9.0, 3.0, 4.0]}; "
              "greedy = {'sentences': 5, 'repeat_seconds': [0.5, 1.0, 1.0, 2.0]}; "
              "costs = decode.paired_costs(row, greedy); "
              "print(costs, decode.median(costs), decode.median(costs[:3]), decode.median([7.0]))")
    # per sentence: 0.2/0.1, 0.9/0.2, 0.3/0.2, 0.4/0.4; the even count's median is the middle two's mean
    assert first_line_of(script) == "[2.0, 4.5, 1.5, 1.0] 1.75 2.0 7.0"


def first_line_of(script):
    """The first line `script` prints, run by a fresh interpreter in the repository (benchmarks/decode.py
    defines its absl flags on import)."""
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert finished.returncode == 0, finished.stderr[-3000:]
    return finished.stdout.split("\n")[0]


def test_xla_batches_are_padded_to_width_buckets():
    # Under XLA every distinct batch shape is one more compilation: batches are cut to their
    # longest sentence, then padded up to a multiple of XLA_WIDTH_MULTIPLE (zeros: padding).
    script = ("import sys, numpy as np; sys.path.insert(0, 'benchmarks'); import decode; "
              "batch = np.array([[5, 6, 7, 0, 0], [8, 0, 0, 0, 0]], np.int32); "
              "print(decode.XLA_WIDTH_MULTIPLE, decode.trimmed(batch).tolist(), decode.trimmed(batch, 4).tolist(), "
              "decode.trimmed(batch, 16).shape, int(decode.trimmed(batch, 16)[:, 3:].sum()))")
    assert first_line_of(script) == "16 [[5, 6, 7], [8, 0, 0]] [[5, 6, 7, 0], [8, 0, 0, 0]] (2, 16) 0"


@pytest.mark.slow
def test_decode_benchmark_profile_splits_beam_cost_into_products_and_the_rest(tmp_path):
    traces = tmp_path / "traces"  # not there yet: --profile_dir makes it
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "decode.py"), "--vocab_size=40", "--source_length=6",
               "--max_length=4", "--batch_sizes=64", "--beam_widths=5", "--modes=graph", "--sentences=64",
               "--repeats=1", "--nosampling", "--profile", f"--profile_dir={traces}"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout)
    rows = {row["search"]: row["profile"] for row in report["results"]}
    for profile in rows.values():
        assert 0 < profile["product_core_ms_per_batch"] <= profile["op_core_ms_per_batch"]
        assert profile["per_batch"]["steps"] == 1 and profile["per_batch"]["trace"].startswith(str(traces))
        assert any("MatMul" in op for op in profile["per_batch"]["op_ms_per_step_by_type"])
    ratio = report["summary"]["beam5_over_greedy_batch64_graph"]
    beam_row = next(row for row in report["results"] if row["search"] == "beam5")
    assert ratio["wall_paired_median"] == round(beam_row["paired_costs_vs_greedy"][0], 2)  # one repeat
    products = rows["beam5"]["product_core_ms_per_batch"] / rows["greedy"]["product_core_ms_per_batch"]
    assert ratio["products"] == pytest.approx(products, abs=0.006)
    ops = rows["beam5"]["op_core_ms_per_batch"] / rows["greedy"]["op_core_ms_per_batch"]
    assert ratio["ops"] == pytest.approx(ops, abs=0.006)


@pytest.mark.slow
def test_eager_rows_decode_their_own_count_of_sentences():
    # --eager_sentences above --sentences: the random model draws enough sources for both (it used to draw
    # --sentences only, and the eager rows' last batches came out empty).
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "decode.py"), "--vocab_size=40", "--source_length=6",
               "--max_length=3", "--batch_sizes=4", "--beam_widths=2", "--modes=eager,graph", "--sentences=8",
               "--eager_sentences=12", "--repeats=1", "--nosampling"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    counts = {(row["mode"], row["search"]): row["sentences"] for row in json.loads(finished.stdout)["results"]}
    assert counts == {("eager", "greedy"): 12, ("eager", "beam2"): 12, ("graph", "greedy"): 8, ("graph", "beam2"): 8}


def test_the_summary_ratios_are_those_of_the_full_vocabulary_rows():
    # A shortlist's beam 5 row shares its summary key with the full vocabulary's; its FLOPs and profile
    # ratios overwrote the full vocabulary's (4.04 = 1422.3 / 352.2 for 1647.8 / 392.9 = 4.19).
    script = """import sys; sys.path.insert(0, 'benchmarks'); import decode
def row(search, shortlist, seconds, gflop, at_peak, products):
    return {"mode": "graph", "batch_size": 64, "search": search, "shortlist": shortlist, "sentences": 1000,
            "seconds": seconds, "sentences_per_second": 1000 / seconds, "cpu_seconds_per_sentence": seconds / 500,
            "repeat_seconds": [seconds], "matmul": {"gflop": gflop, "seconds_at_peak": at_peak},
            "profile": {"product_core_ms_per_batch": products, "op_core_ms_per_batch": 2 * products}}
rows = [row("greedy", "none", 3.0493, 392.9363, 1.1687, 10.0), row("greedy", "k20", 3.0142, 352.2191, 1.0476, 9.0),
        row("beam5", "none", 9.2275, 1647.7645, 4.9011, 40.0), row("beam5", "k20", 8.1386, 1422.2733, 4.2304, 30.0)]
summary = decode.add_ratios(rows)["beam5_over_greedy_batch64_graph"]
print(summary["matmul_gflop"], summary["cost_at_peak"], summary["products"], summary["ops"], summary["wall"])"""
    assert first_line_of(script) == "4.19 1.61 4.0 4.0 3.03"
