"""Where a training step's time goes, from TensorFlow's profiler: op time by region and by op type.

`profiled_fit(model, dataset, steps, log_dir)` runs `model.fit` over `steps` batches under
`tf.profiler.experimental` and returns `summarize(...)` of the trace it wrote (the trace
stays in `log_dir` for TensorBoard's profile plugin). Used by `benchmarks/train.py
--profile_steps N`, after the timed steps, so that the profiler's own cost stays out of
the timing; `benchmarks/decode.py --profile` runs its searches under `profiled(call, log_dir)`
the same way, a batch counting as a step.

The trace holds one event per op the executor ran, on the threads of TensorFlow's
inter-op pool (`tf_Compute`), inside the executor's `ExecutorState::Process` events. Per
step, in core-milliseconds (a core busy for one millisecond):

    ops        the ops' own time, summed over the threads
    executor   `Process` time not spent in an op: scheduling, bookkeeping, memory
    idle       the rest of the step's wall time times the machine's cores: waiting on a
               dependency, the input pipeline, Python

and, over the wall time from the first op to the last, how long no thread, one thread and
several threads at once ran an op (`threads_running_ops_ms_per_step`), with the one-thread
time split by the region of the op that ran (`one_thread_ms_per_step_by_region`): a region
that runs on one thread while the other cores wait is the step's serial part.

An op that splits its own work over the intra-op pool (a oneDNN matrix product of any size)
still counts as one thread: the pool's threads (`tf_numa_..._Eigen`) carry no op events.
Twenty 2048 x 2048 bfloat16 products traced on the 2-core Zen 5 CPU ran at about 700 GFLOP/s,
both cores, and showed as one `tf_Compute` thread at a time. So "one thread" is an upper bound
on the serial part, and the "ops", "executor" and "idle" core-milliseconds count such an op's
time once, not once per core: the "idle" figure includes the second core's share of it.

Ops are put in regions by name: `while_grad` in the name is a time loop's backward pass,
`/while/` its forward pass, `encoder` in the name the encoder's loop and any other loop the
decoder's; everything else (embeddings, input projections, output projection, loss,
optimizer) is `outside_loops`. Products are the ops whose type names a matmul or an einsum.
"""

import collections
import glob
import os
import time

REGIONS = ("encoder_loop_forward", "encoder_loop_backward", "decoder_loop_forward", "decoder_loop_backward",
           "outside_loops")
PRODUCTS = ("MatMul", "Einsum")  # substrings of the op types that are matrix products (_MklMatMul, BatchMatMulV2...)


def region(name):
    """The region of the op named `name` (see the module docstring)."""
    if "/while" not in name and "while_grad" not in name:
        return "outside_loops"
    part = "encoder" if "encoder" in name else "decoder"
    return f"{part}_loop_{'backward' if 'while_grad' in name else 'forward'}"


def profiled_fit(model, dataset, steps, log_dir):
    """`model.fit(dataset)` (`steps` batches) under the profiler; `summarize` of its trace."""
    trace, seconds = profiled(lambda: model.fit(dataset, verbose=0), log_dir)
    return summarize(trace, steps, seconds, os.cpu_count() or 1)


def profiled(call, log_dir):
    """Runs `call()` under TensorFlow's profiler: `(path of the .xplane.pb trace it wrote, seconds)`."""
    import tensorflow as tf

    tf.profiler.experimental.start(log_dir)
    started = time.perf_counter()
    try:
        call()
    finally:
        seconds = time.perf_counter() - started
        tf.profiler.experimental.stop()
    traces = sorted(glob.glob(os.path.join(log_dir, "plugins", "profile", "*", "*.xplane.pb")), key=os.path.getmtime)
    if not traces:
        raise RuntimeError(f"the profiler wrote no trace under {log_dir}")
    return traces[-1], seconds


def summarize(trace_path, steps, seconds, cores, top=15):
    """The per-step breakdown of the `.xplane.pb` trace at `trace_path`, of `steps` steps in `seconds`."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    with open(trace_path, "rb") as f:
        space.ParseFromString(f.read())
    by_region, by_type, products = collections.Counter(), collections.Counter(), collections.Counter()
    process, intervals = 0.0, []
    for plane in space.planes:
        names = plane.event_metadata
        for thread, line in enumerate(plane.lines):
            if not line.name.startswith("tf_Compute"):
                continue
            for event in line.events:
                name, ms = names[event.metadata_id].name, event.duration_ps / 1e9
                if name == "ExecutorState::Process":
                    process += ms
                elif ":" in name and "::" not in name:  # "scope/op_name:OpType", not "Class::method" markers
                    op_name, op_type = name.rsplit(":", 1)
                    where = region(op_name)
                    by_region[where] += ms
                    by_type[op_type] += ms
                    start = line.timestamp_ns * 1000 + event.offset_ps
                    intervals.append((start, start + event.duration_ps, (plane.name, thread), where))
                    if any(p in op_type for p in PRODUCTS):
                        products["outside_loops" if where == "outside_loops" else "in_loops"] += ms
    ops = sum(by_region.values())
    wall = 1000 * seconds / steps

    def per_step(value):
        return round(value / steps, 2)

    return {
        "steps": steps, "cores": cores, "wall_ms_per_step": round(wall, 2),
        "core_ms_per_step": {"ops": per_step(ops), "executor": per_step(max(process - ops, 0.0)),
                             "idle": round(max(wall * cores - process / steps, 0.0), 2)},
        "op_ms_per_step_by_region": {name: per_step(by_region[name]) for name in REGIONS},
        "product_ms_per_step": {name: per_step(products[name]) for name in ("in_loops", "outside_loops")},
        "op_ms_per_step_by_type": {name: per_step(ms) for name, ms in by_type.most_common(top)},
        **_concurrency(intervals, per_step),
        "trace": trace_path,
    }


def _concurrency(intervals, per_step):
    """How long 0, 1 or more threads ran an op, and the 1-thread time by region, from `(start_ps, end_ps, thread,
    region)` intervals (a thread's nested ops count once)."""
    edges = sorted([(start, 1, thread, where) for start, _, thread, where in intervals]
                   + [(end, -1, thread, where) for _, end, thread, where in intervals], key=lambda edge: edge[:2])
    running = collections.defaultdict(list)  # thread -> regions of its ops running now
    by_count, one_by_region = collections.Counter(), collections.Counter()
    last = edges[0][0] if edges else 0
    for time_ps, change, thread, where in edges:
        busy = [regions[-1] for regions in running.values() if regions]
        ms = (time_ps - last) / 1e9
        by_count[min(len(busy), 2)] += ms
        if len(busy) == 1:
            one_by_region[busy[0]] += ms
        last = time_ps
        if change > 0:
            running[thread].append(where)
        else:
            running[thread].remove(where)
    return {
        "threads_running_ops_ms_per_step": {"none": per_step(by_count[0]), "one": per_step(by_count[1]),
                                            "several": per_step(by_count[2])},
        "one_thread_ms_per_step_by_region": {name: per_step(one_by_region[name]) for name in REGIONS},
    }
