"""benchmarks/step_profile.py: a trace's op time summed by region and type, and the step's core accounting."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))

import step_profile  # noqa: E402


@pytest.mark.parametrize("name, region", [
    ("StatefulPartitionedCall/luong_general_1/encoder_1/while/body/_1/MatMul", "encoder_loop_forward"),
    ("gradient_tape/m/encoder_1/while/m/encoder_1/while_grad/body/_9/gradients/AddN", "encoder_loop_backward"),
    ("StatefulPartitionedCall/luong_general_1/while/body/_425/luong_general_1/while/einsum", "decoder_loop_forward"),
    ("gradient_tape/luong_general_1/while/luong_general_1/while_grad/body/_785/MatMul_2_grad", "decoder_loop_backward"),
    ("StatefulPartitionedCall/compile_loss/token_cross_entropy/Softmax", "outside_loops"),
    ("StatefulPartitionedCall/luong_general_1/encoder_1/MatMul_1", "outside_loops"),
])
def test_region_by_name(name, region):
    assert step_profile.region(name) == region


def _trace(path, threads):
    """An XSpace with one `tf_Compute` line per thread of `(name, milliseconds)` events, each thread's ops back to
    back from time 0 (the executor's `Process` events span them, from 0 too)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    plane = space.planes.add(name="/host:CPU")
    ids = {}
    for i, events in enumerate(threads):
        line = plane.lines.add(name=f"tf_Compute/{i}")
        offset = 0
        for name, ms in events:
            if name not in ids:
                ids[name] = len(ids) + 1
                plane.event_metadata[ids[name]].name = name
            process = name == "ExecutorState::Process"
            line.events.add(metadata_id=ids[name], offset_ps=0 if process else offset, duration_ps=int(ms * 1e9))
            offset += 0 if process else int(ms * 1e9)
    other = plane.lines.add(name="python")  # not an executor thread: not counted
    plane.event_metadata[99].name = "x/while/MatMul:_MklMatMul"
    other.events.add(metadata_id=99, duration_ps=int(1000 * 1e9))
    path.write_bytes(space.SerializeToString())
    return str(path)


def test_summarize_sums_per_step(tmp_path):
    trace = _trace(tmp_path / "t.xplane.pb", [
        [("ExecutorState::Process", 30.0), ("m/encoder/while/body/MatMul:_MklMatMul", 8.0),
         ("m/encoder/while/body/Sigmoid:Sigmoid", 4.0), ("gradient_tape/m/while/m/while_grad/b/AddN:AddN", 6.0)],
        [("ExecutorState::Process", 20.0), ("m/output/MatMul:_MklMatMul", 10.0),
         ("m/while/body/Einsum:_MklEinsum", 2.0), ("m/loss/Softmax:_MklSoftmax", 4.0),
         ("ExecutorState::ProcessAsync::Start", 1.0)],  # the executor's own marker, not an op
    ])
    profile = step_profile.summarize(trace, steps=2, seconds=0.05, cores=2, top=3)
    assert profile["wall_ms_per_step"] == 25.0
    # ops 34 ms over 2 steps; Process 50 ms, so the executor's own 16; idle 2 x 25 - 25 a step
    assert profile["core_ms_per_step"] == {"ops": 17.0, "executor": 8.0, "idle": 25.0}
    assert profile["op_ms_per_step_by_region"] == {
        "encoder_loop_forward": 6.0, "encoder_loop_backward": 0.0, "decoder_loop_forward": 1.0,
        "decoder_loop_backward": 3.0, "outside_loops": 7.0}
    assert profile["product_ms_per_step"] == {"in_loops": 5.0, "outside_loops": 5.0}
    assert profile["op_ms_per_step_by_type"] == {"_MklMatMul": 9.0, "AddN": 3.0, "Sigmoid": 2.0}
    # thread 0: 0-8-12-18 ms, thread 1: 0-10-12-16 ms (then the marker): both busy for 16 ms, then the AddN alone
    assert profile["threads_running_ops_ms_per_step"] == {"none": 0.0, "one": 1.0, "several": 8.0}
    assert profile["one_thread_ms_per_step_by_region"] == {
        "encoder_loop_forward": 0.0, "encoder_loop_backward": 0.0, "decoder_loop_forward": 0.0,
        "decoder_loop_backward": 1.0, "outside_loops": 0.0}
