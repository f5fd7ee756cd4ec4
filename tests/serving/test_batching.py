"""zoo-serve's batching: merged requests get exactly the answers of separate calls.

Every request asks for a different sentence, so an answer given to the wrong request (swapped
inside a batch, or cut at the wrong row) fails the comparison even when the lengths are equal.
"""

import asyncio
import concurrent.futures
import json
import time

import httpx
import numpy as np
import pytest
import tensorflow as tf

import saved_model_fixture as fixture
from serving.batch_outputs import can_split, split_outputs
from serving.batching import BatchScheduler, is_batchable, plain_tf_message
from serving.model_registry import ModelRegistry, Signature


class _CountingFunction:
    """Wraps a signature function, recording the batch size (and beam width) of every call."""

    def __init__(self, function):
        self.function = function
        self.calls = []

    def __call__(self, **inputs):
        beam_width = int(inputs["beam_width"]) if "beam_width" in inputs else None
        self.calls.append((int(inputs["source"].shape[0]), beam_width))
        time.sleep(0.02)  # Long enough for the other requests to queue up behind this call.
        return self.function(**inputs)


@pytest.fixture(scope="module")
def registry(fixture_base_path):
    registry = ModelRegistry("zoo", fixture_base_path)
    registry.poll()
    return registry


def _counted(registry, name):
    original = registry.current.signatures[name]
    counting = _CountingFunction(original.function)
    return Signature(name, counting, original.inputs, original.outputs), counting


def _strings(*texts):
    return np.array([t.encode("utf-8") for t in texts], dtype=object)


def _run_concurrently(scheduler, signature, requests):
    async def main():
        return await asyncio.gather(*(scheduler.predict(signature, r) for r in requests), return_exceptions=True)

    try:
        return asyncio.run(main())
    finally:
        scheduler.shutdown()


def test_equal_length_requests_get_their_own_answers_from_a_merged_batch(registry):
    signature, counting = _counted(registry, "serving_default")
    sources = [f"sentence {i:03d}" for i in range(24)]  # All 12 characters long, all different.
    answers = _run_concurrently(
        BatchScheduler(max_batch_size=8, num_batch_threads=1), signature, [{"source": _strings(s)} for s in sources]
    )
    assert [a["translation"].tolist() for a in answers] == [[fixture.expected_translation(s).encode()] for s in sources]
    sizes = [size for size, _ in counting.calls]
    assert sum(sizes) == 24 and max(sizes) == 8 and len(sizes) < 24


def test_a_failing_request_runs_alone_and_its_neighbours_still_get_their_answers(registry):
    signature, counting = _counted(registry, "score")
    targets = ["t" * (i + 1) for i in range(20)]  # Distinct lengths: distinct log-probabilities.
    requests = [{"source": _strings("s"), "target": _strings(t)} for t in targets]
    # Mismatched lengths fail alone (InvalidArgument in the model) without failing the others.
    requests.append({"source": _strings("s", "t"), "target": _strings("u")})
    *answers, failure = _run_concurrently(BatchScheduler(max_batch_size=8, num_batch_threads=1), signature, requests)
    for answer, target in zip(answers, targets):
        np.testing.assert_allclose(answer["log_prob"], [fixture.log_prob_of(target)], rtol=1e-6)
    assert getattr(failure, "status_code", None) == 400, failure
    assert "same batch size" in failure.message and "node" not in failure.message
    sizes = [size for size, _ in counting.calls]
    assert sum(sizes) == 20 + 2  # The bad request ran alone.
    assert max(sizes) == 8 and len(sizes) < 20


_BEAM_A = {"beam_width": np.int32(3), "num_hypotheses": np.int32(2), "length_penalty": np.float32(0.5)}
_BEAM_B = {"beam_width": np.int32(5), "num_hypotheses": np.int32(4), "length_penalty": np.float32(1.0)}


def test_beam_search_requests_with_equal_parameters_share_batches_and_get_separate_answers(registry):
    signature, counting = _counted(registry, "beam_search")
    sentences = [
        ("one two three",), ("a",), ("", "x y"), ("four five six",), ("q w e r t y",), ("",),
        ("seven eight nine",), ("b c", "d e f g", "h"), ("ten eleven twelve",),
    ]
    requests = [{"source": _strings(*s), **(_BEAM_A if i % 3 else _BEAM_B)} for i, s in enumerate(sentences)]
    answers = _run_concurrently(BatchScheduler(max_batch_size=16, num_batch_threads=1), signature, requests)
    function = registry.current.signatures["beam_search"].function
    for request, answer in zip(requests, answers):
        alone = {k: v.numpy() for k, v in function(**{k: tf.constant(v) for k, v in request.items()}).items()}
        assert set(answer) == set(alone)
        for name in alone:
            assert answer[name].shape == alone[name].shape, name
            if alone[name].dtype == object:
                np.testing.assert_array_equal(answer[name], alone[name], err_msg=name)
            else:  # Vectorized float math may round the last bit differently for another batch size.
                np.testing.assert_allclose(answer[name], alone[name], rtol=1e-6, err_msg=name)
    # Requests of one parameter set went together; the two sets never shared a call.
    assert len(counting.calls) < len(requests)
    assert sorted(counting.calls)[-1][0] > 3
    rows = {3: sum(len(s) for i, s in enumerate(sentences) if i % 3), 5: sum(len(s) for i, s in enumerate(sentences) if not i % 3)}
    assert {width: sum(size for size, w in counting.calls if w == width) for width in rows} == rows


def test_beam_search_batching_over_rest_keeps_every_answer_with_its_request(zoo_serve_server):
    sources = [f"word{i} " * (1 + i % 4) + f"end{i:02d}" for i in range(24)]

    def ask(source):
        body = {"signature_name": "beam_search", "inputs": {"source": [source], "beam_width": 3, "num_hypotheses": 2, "length_penalty": 1.0}}
        with httpx.Client(timeout=60) as http:
            return http.post(f"{zoo_serve_server.model_url}:predict", content=json.dumps(body)).json()["outputs"]

    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(ask, sources))
    for source, outputs in zip(sources, answers):
        best = fixture.expected_translation(source)
        assert outputs["translations"] == [[best, best + "~"]]
        assert outputs["source_tokens"] == [source.split()]
        assert outputs["target_tokens"] == [best.split()]
        n = len(source.split())
        assert outputs["attention"] == [np.eye(n)[::-1].tolist()]


def test_split_outputs_cuts_each_part_to_its_own_sentence_lengths():
    outputs = {
        "translations": np.array([[b"X"], [b"Y"], [b"Z"]], dtype=object),
        "source_tokens": np.array([[b"a", b"b", b""], [b"", b"", b""], [b"c", b"", b""]], dtype=object),
        "target_tokens": np.array([[b"A", b"</s>"], [b"</s>", b""], [b"C", b""]], dtype=object),
        "attention": np.arange(3 * 2 * 3, dtype=np.float32).reshape(3, 2, 3),
    }
    first, second = split_outputs(outputs, [2, 1])
    assert first["translations"].tolist() == [[b"X"], [b"Y"]]
    assert first["source_tokens"].tolist() == [[b"a", b"b"], [b"", b""]]
    assert first["target_tokens"].tolist() == [[b"A", b"</s>"], [b"</s>", b""]]
    assert first["attention"].tolist() == outputs["attention"][:2, :2, :2].tolist()
    assert second["source_tokens"].tolist() == [[b"c"]]
    assert second["target_tokens"].tolist() == [[b"C"]]
    assert second["attention"].tolist() == [[[12.0]]]
    # An all-empty source keeps one column, as the export answers for it alone.
    (empty,) = split_outputs({k: v[1:2] for k, v in outputs.items()}, [1])
    assert empty["source_tokens"].tolist() == [[b""]] and empty["attention"].shape == (1, 1, 1)


def test_only_signatures_whose_outputs_can_be_cut_are_batched(registry):
    signatures = registry.current.signatures
    assert {name: is_batchable(s) for name, s in signatures.items()} == {
        "serving_default": True, "greedy": True, "score": True, "beam_search": True,
    }
    unknown = dict(signatures["beam_search"].outputs, heatmap=tf.TensorSpec([None, None], tf.float32))
    assert not can_split(unknown)
    no_tokens = {k: v for k, v in signatures["beam_search"].outputs.items() if k != "source_tokens"}
    assert not can_split(no_tokens)


def test_tensorflow_messages_lose_their_graph_details():
    message = (
        "Graph execution error:\n\nDetected at node assert_equal_1/Assert/Assert defined at (most recent call last):\n"
        '  File "/x/model.py", line 3, in score\n<stack traces unavailable>\nassertion failed: [source and target '
        "must have the same batch size] [2] [1]\n\t [[{{node assert_equal_1/Assert/Assert}}]] "
        "[Op:__inference_signature_wrapper_score_1008]"
    )
    assert plain_tf_message(message) == "assertion failed: [source and target must have the same batch size] [2] [1]"
    assert plain_tf_message("indices[0] = 7 is not in [0, 5) [Op:GatherV2]") == "indices[0] = 7 is not in [0, 5)"


def test_with_batching_disabled_every_request_is_its_own_call(registry):
    signature, counting = _counted(registry, "serving_default")
    sources = [f"alone {i:02d}" for i in range(10)]
    answers = _run_concurrently(
        BatchScheduler(max_batch_size=8, num_batch_threads=1, enable_batching=False),
        signature,
        [{"source": _strings(s)} for s in sources],
    )
    assert [a["translation"].tolist() for a in answers] == [[fixture.expected_translation(s).encode()] for s in sources]
    assert [size for size, _ in counting.calls] == [1] * 10


def test_requests_that_timed_out_while_queued_are_not_run(registry):
    """Requests with distinct scalars queue batches of their own in one pool: those whose clients gave up
    (zoo-serve's deadline) were still run one after the other, so every later request timed out too."""
    original = registry.current.signatures["beam_search"]
    calls = []

    def slow(**inputs):
        calls.append(float(inputs["length_penalty"]))
        time.sleep(0.3)
        return original.function(**inputs)

    signature = Signature("beam_search", slow, original.inputs, original.outputs)
    scheduler = BatchScheduler(max_batch_size=8, num_batch_threads=1)  # a pool of two workers

    async def main():
        async def ask(penalty, timeout):
            request = {"source": _strings("a b"), "beam_width": np.int32(2), "num_hypotheses": np.int32(1),
                       "length_penalty": np.float32(penalty)}
            return await asyncio.wait_for(scheduler.predict(signature, request), timeout)

        gave_up = await asyncio.gather(*(ask(0.1 * i, 0.1) for i in range(12)), return_exceptions=True)
        assert all(isinstance(answer, asyncio.TimeoutError) for answer in gave_up)
        started = time.monotonic()
        answer = await ask(2.0, 10)
        return answer, time.monotonic() - started

    try:
        answer, seconds = asyncio.run(main())
    finally:
        scheduler.shutdown()
    assert answer["translations"].shape == (1, 1)
    assert len(calls) == 3 and calls[-1] == pytest.approx(2.0)  # the two running at the deadline, then the new one
    assert seconds < 1.5  # behind at most the two that were running, not ten more
