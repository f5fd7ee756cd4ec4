"""Latency and throughput of one-sentence translation requests against `zoo-serve`; or a soak run.

    python benchmarks/serve.py                            # the test fixture model (no training needed)
    python benchmarks/serve.py --export_dir=WORKDIR/export  # a real zoo export (base path or version dir)
    python benchmarks/serve.py --url=http://localhost:8501  # an already running server, e.g. TF Serving
    python benchmarks/serve.py --soak --export_dir=WORKDIR/export   # 64 clients, 5 minutes, good and bad requests

Starts the real `zoo-serve` command in a subprocess on a free port, then for each concurrency
level runs that many clients, each sending `--requests_per_client` one-sentence `:predict`
requests back to back, and prints one JSON object: p50/p99 latency (ms) and throughput
(requests/s) per level, and which model was served.

With `--soak`, `--soak_clients` clients send a mix of good and bad requests for `--soak_minutes`
minutes (see `soak.py`) while the server's memory is sampled; the JSON (also written to
`--output`) counts 5xx answers and dropped connections (must be 0), bad requests not answered
with a 4xx (must be 0), and gives p50/p99 latency and resident memory over time.
"""

import asyncio
import json
import logging
import os
import subprocess
import sys
import tempfile
import time

import httpx
import numpy as np
from absl import app, flags
from flag_checks import positive_integers

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO_ROOT, os.path.join(REPO_ROOT, "tests", "serving")]  # this checkout's serving/

from zoo import machine  # noqa: E402  (standard library only: cheap)

FLAGS = flags.FLAGS
flags.DEFINE_string("export_dir", None, "Model base path (numeric version dirs) or one version dir; default: the test fixture.")
flags.DEFINE_string("url", None, "Benchmark this running server instead of starting zoo-serve.")
flags.DEFINE_string("model_name", "zoo", "Model name in the URL.")
flags.DEFINE_list("concurrency", ["1", "4", "16"], "Numbers of concurrent clients.")
flags.DEFINE_integer("requests_per_client", 50, "Requests each client sends at each concurrency level.",
                     lower_bound=1)
flags.DEFINE_string("signature", "serving_default", "Signature the requests call.")
flags.DEFINE_string("sentence", "the quick brown fox jumps over the lazy dog", "The one-sentence request.")
flags.DEFINE_bool("enable_batching", True, "Passed to zoo-serve.")
flags.DEFINE_bool("soak", False, "Run the soak test instead of the latency levels.")
flags.DEFINE_float("soak_minutes", 5.0, "How long the soak runs.")
flags.DEFINE_integer("soak_clients", 64, "Concurrent clients of the soak.", lower_bound=1)
flags.DEFINE_string("output", os.path.join(REPO_ROOT, "benchmarks", "results", "serve_soak.json"), "Where --soak writes its JSON.")


def model_base_path(tmp: str):
    """Returns (model base path, description) of what the benchmark serves."""
    if FLAGS.export_dir is None:
        import saved_model_fixture

        saved_model_fixture.build_saved_model(tmp, version=1)
        return tmp, {"source": "fixture", "model_base_path": None}
    export_dir = os.path.abspath(FLAGS.export_dir)
    if os.path.isfile(os.path.join(export_dir, "saved_model.pb")):  # A version dir: wrap it as version 1.
        os.symlink(export_dir, os.path.join(tmp, "1"))
        return tmp, {"source": "export", "export_dir": export_dir}
    return export_dir, {"source": "export", "model_base_path": export_dir}


def start_zoo_serve(base_path: str, log_path: str):
    """Starts the `zoo-serve` CLI on a free port, logging to `log_path`; returns (process, URL) once it answers."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "recipes.serve", f"--model_base_path={base_path}",
               f"--model_name={FLAGS.model_name}", f"--rest_api_port={port}",
               f"--enable_batching={FLAGS.enable_batching}"]
    env = {**os.environ, "PYTHONPATH": REPO_ROOT}
    with open(log_path, "wb") as log:  # A file, not a pipe: nobody reads a pipe while the benchmark runs.
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            with open(log_path, encoding="utf-8", errors="replace") as log:
                raise RuntimeError(f"zoo-serve exited with {process.returncode}: {log.read()[-2000:]}")
        try:
            if httpx.get(f"{url}/v1/models/{FLAGS.model_name}", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    process.terminate()
    raise RuntimeError("zoo-serve did not serve the model within 180 s")


async def run_level(url: str, clients: int) -> dict:
    """`clients` concurrent clients, each sending requests back to back; latency stats of the answered
    ones (a failed request's time is an error reply's). Raises RuntimeError when every request failed."""
    predict_url = f"{url}/v1/models/{FLAGS.model_name}:predict"
    body = {"signature_name": FLAGS.signature, "instances": [FLAGS.sentence]}
    latencies, failures = [], []

    async def one_client():
        async with httpx.AsyncClient(timeout=60) as http:
            for _ in range(FLAGS.requests_per_client):
                start = time.perf_counter()
                response = await http.post(predict_url, json=body)
                if response.status_code == 200:
                    latencies.append(time.perf_counter() - start)
                else:
                    failures.append(f"HTTP {response.status_code}: {response.text[:200]}")

    start = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    wall = time.perf_counter() - start
    if not latencies:
        raise RuntimeError(f"every request to {predict_url} failed; the first: {failures[0]}")
    latency_ms = np.array(latencies) * 1000
    return {
        "concurrency": clients,
        "requests": len(latencies) + len(failures),
        "failures": len(failures),
        "first_failure": failures[0] if failures else None,
        "p50_ms": round(float(np.percentile(latency_ms, 50)), 2),
        "p99_ms": round(float(np.percentile(latency_ms, 99)), 2),
        "throughput_rps": round(len(latencies) / wall, 1),  # answered requests a second
    }


def run_soak(url: str, process) -> dict:
    """The soak report (see soak.py), with what was served and how."""
    from serving.limits import ServingLimits

    import soak

    limits = ServingLimits()  # zoo-serve runs with its default limits
    report = asyncio.run(soak.run_soak(
        f"{url}/v1/models/{FLAGS.model_name}", process.pid if process else None, FLAGS.soak_minutes,
        FLAGS.soak_clients, limits.max_request_bytes, limits.max_sentences_per_request,
    ))
    if process is not None and process.poll() is not None:
        report["passed"] = False
        report["server_exited"] = process.returncode
    return {"benchmark": "serve_soak", "clients": FLAGS.soak_clients, "minutes": FLAGS.soak_minutes,
            "zoo_serve_limits": None if FLAGS.url else vars(limits), **report}


def _check_flags():
    """A clear error naming a bad flag, before any server starts."""
    positive_integers("concurrency", FLAGS.concurrency, example="1,4,16")
    if not FLAGS.soak_minutes > 0:
        raise app.UsageError(f"--soak_minutes={FLAGS.soak_minutes}: expected a number of minutes > 0")
    if FLAGS.export_dir and not os.path.isdir(FLAGS.export_dir):
        raise app.UsageError(f"--export_dir={FLAGS.export_dir}: not a directory")


def main(argv):
    del argv
    _check_flags()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # One log line per request would drown the JSON.
    logging.getLogger().setLevel(logging.WARNING)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        process = None
        if FLAGS.url:
            url, model, server = FLAGS.url.rstrip("/"), {"source": "running server"}, FLAGS.url
        else:
            base_path, model = model_base_path(tmp)
            log_path = os.path.join(tmp, "zoo_serve.log")
            process, url = start_zoo_serve(base_path, log_path)
            server = "zoo-serve"
        try:
            status = httpx.get(f"{url}/v1/models/{FLAGS.model_name}", timeout=10).json()
            model["version"] = status["model_version_status"][0]["version"]
            try:
                asyncio.run(run_level(url, 2))  # Warm up connections and the graph.
            except RuntimeError as error:  # a wrong --signature or --model_name: no level would measure anything
                raise SystemExit(f"serve.py: {error}") from None
            if FLAGS.soak:
                report = run_soak(url, process)
            else:
                results = [asyncio.run(run_level(url, int(c))) for c in FLAGS.concurrency]
        finally:
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
        if FLAGS.soak and process is not None:
            with open(log_path, encoding="utf-8", errors="replace") as log:
                report["server_log_tracebacks"] = log.read().count("Traceback")
    if FLAGS.soak:
        report = {**report, "server": server, "model": model, "cpu_count": os.cpu_count(),
                  "load_average_1min_before": round(load_before, 2), "machine": machine.describe()}
        os.makedirs(os.path.dirname(os.path.abspath(FLAGS.output)), exist_ok=True)
        with open(FLAGS.output, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
        print(json.dumps({k: v for k, v in report.items() if k != "rss_mb"} | {"rss_mb": {
            k: v for k, v in report.get("rss_mb", {}).items() if k != "samples"}}, indent=2))
        return 0 if report["passed"] else 1
    print(json.dumps({
        "benchmark": "serve",
        "server": server,
        "batching": FLAGS.enable_batching if process else None,
        "model": model,
        "signature": FLAGS.signature,
        "sentence": FLAGS.sentence,
        "requests_per_client": FLAGS.requests_per_client,
        "cpu_count": os.cpu_count(),
        "load_average_1min_before": round(load_before, 2),  # Other work on the machine skews timings.
        "machine": machine.describe(),
        "results": results,
    }, indent=2))
    return 1 if any(level["failures"] for level in results) else 0


if __name__ == "__main__":
    app.run(main)
