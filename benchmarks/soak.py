"""The soak run of `benchmarks/serve.py --soak`: many clients, good and bad requests, for minutes.

Each client sends requests back to back, drawn from a mix of good ones (every signature, both
REST formats, odd sentences, odd beam parameters that the export clamps) and bad ones (malformed,
hostile and oversized bodies, too many sentences, unknown names, wrong methods). Meanwhile the
server's resident memory is sampled. Nothing may answer 5xx or drop a connection, every bad
request must get a 4xx and every good one a 200 with one answer per sentence.
"""

import asyncio
import json
import random
import time

import httpx
import numpy as np

DATES = ["3 mars 2021", "le 4 avril 1999", "12/05/2020", "1 janvier 2000", "31 déc. 1987", "7 mai", "2 2"]
ODD = ["", "   ", "😀 ЖЖ", "3 mars 2021 " * 40, "x" * 3000, "\u0000\u0007 ctrl", "ＡＢＣ ｆｕｌｌ", "\u202eabc", "日本語の文"]
# (beam_width, num_hypotheses, length_penalty): the last ones are out of range and clamped by the export.
BEAM_PARAMETERS = [(5, 1, 0.6), (4, 2, 1.0), (3, 3, 0.0), (1, 1, 0.6), (0, 5, 0.6), (100, 2, float("nan")), (2, -3, 0.6)]
MAX_BEAM_WIDTH = 64
GOOD_KINDS = ["serving_default", "greedy", "beam_search", "score", "status", "metadata"]
GOOD_WEIGHTS = [30, 15, 20, 10, 3, 2]
BAD_SHARE = 0.2  # of all requests
OVERSIZED_SHARE = 0.01  # of the bad ones: each is a body just over --max_request_bytes


def _sentences(rng, most=8):
    return [rng.choice(DATES + ODD) for _ in range(rng.randint(1, most))]


def good_request(rng):
    """A request the server must answer 200: (kind, method, path suffix, body, answers expected)."""
    kind = rng.choices(GOOD_KINDS, GOOD_WEIGHTS)[0]
    if kind in ("status", "metadata"):
        return kind, "GET", "" if kind == "status" else "/metadata", None, None
    if kind == "serving_default":
        sources = _sentences(rng)
        return kind, "POST", ":predict", {"instances": sources}, (len(sources), None)
    if kind == "greedy":
        sources = _sentences(rng)
        return kind, "POST", ":predict", {"signature_name": "greedy", "inputs": {"source": sources}}, (len(sources), None)
    if kind == "score":
        sources = _sentences(rng)
        rows = [{"source": s, "target": rng.choice(DATES + ODD)} for s in sources]
        return kind, "POST", ":predict", {"signature_name": "score", "instances": rows}, (len(sources), None)
    beam_width, num_hypotheses, length_penalty = rng.choice(BEAM_PARAMETERS)
    sources = _sentences(rng, most=2 if beam_width > 8 else 8)
    inputs = {"source": sources, "beam_width": beam_width, "num_hypotheses": num_hypotheses, "length_penalty": length_penalty}
    clamped_width = min(max(beam_width, 1), MAX_BEAM_WIDTH)
    hypotheses = min(max(num_hypotheses, 1), clamped_width)
    return kind, "POST", ":predict", {"signature_name": "beam_search", "inputs": inputs}, (len(sources), hypotheses)


def bad_requests(model_url: str, max_request_bytes: int, max_sentences: int) -> dict:
    """kind -> (method, URL, body bytes or None): each must be answered with a 4xx."""
    beam = '{"signature_name": "beam_search", "inputs": {"source": ["a"], "beam_width": %s, "num_hypotheses": 1, "length_penalty": 0.6}}'
    deep = 50_000
    other_model = model_url.rsplit("/", 1)[0] + "/no_such_model"
    requests = {
        "malformed_json": ("POST", ":predict", b'{"instances": ["a"'),
        "not_utf8": ("POST", ":predict", b'{"instances": ["\xff\xfe"]}'),
        "deeply_nested": ("POST", ":predict", b"[" * deep + b"]" * deep),
        "deep_instance": ("POST", ":predict", b'{"instances": ' + b"[" * 900 + b"]" * 900 + b"}"),
        "huge_integer": ("POST", ":predict", b'{"instances": [' + b"9" * 5000 + b"]}"),
        "big_integer_for_int32": ("POST", ":predict", (beam % ("9" * 400)).encode()),
        "nan_for_int32": ("POST", ":predict", (beam % "NaN").encode()),
        "number_for_string": ("POST", ":predict", b'{"instances": [3]}'),
        "unknown_signature": ("POST", ":predict", b'{"signature_name": "nope", "instances": ["a"]}'),
        "missing_input": ("POST", ":predict", b'{"signature_name": "score", "inputs": {"source": ["a"]}}'),
        "ragged": ("POST", ":predict", b'{"inputs": {"source": [["a", "b"], ["c"]]}}'),
        "bad_b64": ("POST", ":predict", b'{"instances": [{"b64": "***"}]}'),
        "too_many_sentences": ("POST", ":predict", json.dumps({"instances": ["a"] * (max_sentences + 1)}).encode()),
        "oversized_body": ("POST", ":predict", b'{"instances": ["' + b"a" * (max_request_bytes + 1024) + b'"]}'),
        "get_predict": ("GET", ":predict", None),
        "post_status": ("POST", "", b'{"instances": ["a"]}'),
        "unknown_version": ("POST", "/versions/987:predict", b'{"instances": ["a"]}'),
    }
    requests = {kind: (method, model_url + suffix, body) for kind, (method, suffix, body) in requests.items()}
    requests["unknown_model"] = ("POST", other_model + ":predict", b'{"instances": ["a"]}')
    return requests


def _check_answer(kind, response, expected) -> bool:
    """True when a 200 predict answer has one answer per sentence (and the clamped n-best size)."""
    if expected is None:
        return True
    rows, hypotheses = expected
    answer = response.json()
    if kind == "beam_search":
        translations = answer["outputs"]["translations"]
        return len(translations) == rows and all(len(row) == hypotheses for row in translations)
    values = answer["predictions"] if "predictions" in answer else answer["outputs"]["translation"]
    return len(values) == rows


async def _client(index, model_url, deadline, bad, records):
    rng = random.Random(index)
    plain_kinds = [k for k in bad if k != "oversized_body"]
    async with httpx.AsyncClient(timeout=300) as http:
        while time.monotonic() < deadline:
            if rng.random() < BAD_SHARE:
                kind = "oversized_body" if rng.random() < OVERSIZED_SHARE else rng.choice(plain_kinds)
                (method, url, body), expected, good = bad[kind], None, False
            else:
                kind, method, suffix, body, expected = good_request(rng)
                url, body, good = model_url + suffix, None if body is None else json.dumps(body).encode(), True
            start = time.perf_counter()
            try:
                response = await http.request(method, url, content=body)
                status = response.status_code
                correct = status != 200 or _check_answer(kind, response, expected)
            except httpx.TransportError as error:
                status, correct = f"connection error: {type(error).__name__}", False
            records.append((kind, good, status, correct, time.perf_counter() - start))


def read_rss_mb(pid: int, field: str = "VmRSS") -> float:
    """The process's resident memory (or `VmHWM`, its peak) in MiB, from /proc."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise ValueError(f"/proc/{pid}/status has no {field} line")


async def _sample_rss(pid, start, deadline, samples, every_seconds=5.0):
    while time.monotonic() < deadline:
        samples.append((round(time.monotonic() - start, 1), round(read_rss_mb(pid), 1)))
        await asyncio.sleep(every_seconds)


async def run_soak(model_url, pid, minutes, clients, max_request_bytes, max_sentences) -> dict:
    """Runs the soak against `model_url` (`.../v1/models/NAME`); `pid` is the server's, or None."""
    bad = bad_requests(model_url, max_request_bytes, max_sentences)
    records, samples = [], []
    start = time.monotonic()
    deadline = start + 60 * minutes
    tasks = [_client(i, model_url, deadline, bad, records) for i in range(clients)]
    if pid is not None:
        tasks.append(_sample_rss(pid, start, deadline, samples))
    await asyncio.gather(*tasks)
    wall = time.monotonic() - start
    if pid is not None:
        samples.append((round(wall, 1), round(read_rss_mb(pid), 1)))
    report = summarize(records, wall)
    if pid is not None:
        report["rss_mb"] = summarize_rss(samples, read_rss_mb(pid, "VmHWM"))
    return report


def _percentiles(latencies) -> dict:
    if not latencies:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    ms = np.array(latencies) * 1000
    return {key: round(float(np.percentile(ms, q)), 1) for key, q in (("p50_ms", 50), ("p99_ms", 99), ("max_ms", 100))}


def summarize(records, wall) -> dict:
    """Counts and latencies of the soak's requests; `passed` when none failed."""
    by_status = {}
    for _, _, status, _, _ in records:
        by_status[str(status)] = by_status.get(str(status), 0) + 1
    good = [r for r in records if r[1]]
    bad = [r for r in records if not r[1]]
    bad_kinds = {}
    for kind, _, status, _, _ in bad:
        statuses = bad_kinds.setdefault(kind, {})
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    errors_5xx = sum(1 for r in records if isinstance(r[2], int) and r[2] >= 500)
    connection_errors = sum(1 for r in records if not isinstance(r[2], int))
    good_not_200 = sum(1 for r in good if r[2] != 200)
    wrong_answers = sum(1 for r in good if not r[3])
    bad_not_4xx = sum(1 for r in bad if not (isinstance(r[2], int) and 400 <= r[2] < 500))
    return {
        "requests": len(records),
        "requests_per_second": round(len(records) / wall, 1),
        "by_status": dict(sorted(by_status.items())),
        "errors_5xx": errors_5xx,
        "connection_errors": connection_errors,
        "latency": _percentiles([r[4] for r in records]),
        "good": {"requests": len(good), "not_200": good_not_200, "wrong_answers": wrong_answers,
                 "latency": _percentiles([r[4] for r in good if r[0] not in ("status", "metadata")])},
        "status_checks": {"requests": sum(1 for r in good if r[0] == "status"),
                          "latency": _percentiles([r[4] for r in good if r[0] == "status"])},
        "bad": {"requests": len(bad), "not_4xx": bad_not_4xx, "by_kind": dict(sorted(bad_kinds.items()))},
        "passed": errors_5xx == connection_errors == good_not_200 == wrong_answers == bad_not_4xx == 0,
    }


def summarize_rss(samples, peak_mb) -> dict:
    """Resident memory over time; `growth_after_first_minute_mb` is the last sample minus the one at 60 s."""
    after = [mb for t, mb in samples if t >= 60]
    at_one_minute = after[0] if after else None
    return {
        "samples": samples,
        "at_first_minute": at_one_minute,
        "max_after_first_minute": max(after) if after else None,
        "last": samples[-1][1] if samples else None,
        "growth_after_first_minute_mb": round(samples[-1][1] - at_one_minute, 1) if after else None,
        "peak_sampled": max(mb for _, mb in samples) if samples else None,
        "peak_vm_hwm": round(peak_mb, 1),
    }
