"""benchmarks/serve.py on the test fixture's export: what it reports when requests fail, and --output."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def serve_benchmark(tmp_path, *flags):
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "serve.py"), *flags]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600)


def test_requests_that_all_fail_are_an_error_not_latencies(tmp_path):
    # A wrong signature: every request got a 400, and the levels reported those error replies' times as
    # p50/p99 and throughput, exit status 0.
    finished = serve_benchmark(tmp_path, "--signature=nope", "--concurrency=1", "--requests_per_client=2")
    assert finished.returncode != 0 and finished.stdout == ""
    assert "serve.py: every request to http://" in finished.stderr and "failed; the first: HTTP 400" in finished.stderr


def test_a_soak_writes_its_output_in_the_current_directory(tmp_path):
    # `--output soak.json` (no folder) failed after the whole soak: os.makedirs("").
    finished = serve_benchmark(tmp_path, "--soak", "--soak_minutes=0.05", "--soak_clients=2", "--output=soak.json")
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads((tmp_path / "soak.json").read_text())
    assert report["passed"] is True and report["server"] == "zoo-serve"
