"""Runs signatures off the event loop, merging concurrent requests into batches.

TensorFlow releases the GIL while it runs a graph, so predictions run in a thread pool and
concurrent requests are served concurrently. On top of that, requests are batched adaptively:
up to `num_batch_threads` batches of a signature run at once, and requests arriving while they
are busy queue up and go together as the next batch (at most `max_batch_size` examples). No
request waits for a timer, so one client sees no added latency.

A signature is batched when its inputs are (B,) tensors, scalars or of unknown rank, and
`serving.batch_outputs` can cut its outputs back per request: `serving_default`, `greedy`,
`score` (all (B,)), `beam_search` and `sample`, whose parameters are of unknown rank (a scalar
or one value per sentence). A request's (B,) values are concatenated with the other requests';
its scalars must be equal for requests to share a batch (requests with other values queue for
a batch of their own).
(B,) inputs are concatenated, outputs split along the batch axis and cut to each request's own
sentence lengths, so the answers are those of separate calls.
"""

import asyncio
import concurrent.futures
import dataclasses
import json
import logging
import re

import numpy as np
import tensorflow as tf

from serving.batch_outputs import can_split, has_fixed_axes, split_outputs
from serving.errors import ServingError
from serving.json_text import quoted
from serving.model_registry import Signature

# TF error codes (canonical gRPC codes) -> HTTP status, as TF Serving maps them.
_HTTP_STATUS_OF_TF_CODE = {
    tf.errors.INVALID_ARGUMENT: 400,
    tf.errors.FAILED_PRECONDITION: 400,
    tf.errors.OUT_OF_RANGE: 400,
    tf.errors.NOT_FOUND: 404,
    tf.errors.ALREADY_EXISTS: 409,
    tf.errors.PERMISSION_DENIED: 403,
    tf.errors.UNAUTHENTICATED: 401,
    tf.errors.RESOURCE_EXHAUSTED: 429,
    tf.errors.UNIMPLEMENTED: 501,
    tf.errors.UNAVAILABLE: 503,
    tf.errors.DEADLINE_EXCEEDED: 504,
}


def run_signature(signature: Signature, arrays: dict) -> dict:
    """Calls `signature` on numpy inputs; returns output name -> numpy array.

    Raises:
        ServingError: 4xx for TensorFlow errors caused by the inputs (InvalidArgument and the
            like), 500 for internal ones.
    """
    tensors = {name: tf.constant(arrays[name], dtype=spec.dtype) for name, spec in signature.inputs.items()}
    try:
        outputs = signature.function(**tensors)
    except tf.errors.OpError as error:
        status = _HTTP_STATUS_OF_TF_CODE.get(error.error_code, 500)
        raise ServingError(plain_tf_message(error.message), status) from None
    except Exception as error:  # Anything else is our fault or the model's, not the client's.
        logging.exception("Signature '%s' failed", signature.name)
        raise ServingError(
            f"Internal error running signature {quoted(signature.name)} ({type(error).__name__}); see the zoo-serve log",
            500,
        ) from None
    return {name: tensor.numpy() for name, tensor in outputs.items()}


def plain_tf_message(message: str) -> str:
    """A TensorFlow error message without its graph details: node and op names, where-defined stacks."""
    kept, in_stack = [], False
    for line in message.splitlines():
        if line.startswith("Detected at node"):
            in_stack = True  # The stack lines that follow are indented.
            continue
        if in_stack and (line[:1].isspace() or line.startswith("<stack traces")):
            continue
        in_stack = False
        if line.strip() and not line.startswith("Graph execution error") and not line.lstrip().startswith("[[{{"):
            kept.append(line.strip())
    return re.sub(r"\s*\[Op:[^\]]*\]$", "", " ".join(kept)) or "TensorFlow refused the inputs"


def is_batchable(signature: Signature) -> bool:
    """True for (B,), scalar or unknown-rank inputs (at least one (B,)) and outputs `split_outputs` can cut."""
    ranks = [spec.shape.rank for spec in signature.inputs.values()]
    return 1 in ranks and all(rank in (0, 1, None) for rank in ranks) and can_split(signature.outputs)


def _fits_rows(signature: Signature, arrays: dict, rows: int) -> bool:
    """True when every unknown-rank input of the request is a scalar or has one value per row."""
    return all(
        arrays[name].ndim == 0 or arrays[name].shape == (rows,)
        for name, spec in signature.inputs.items()
        if spec.shape.rank is None
    )


def _scalar_key(signature: Signature, arrays: dict) -> tuple:
    """What requests sharing a batch must have in common.

    The names and values of their scalar inputs; and, when an output has an axis the batch
    cannot cut back (`beam_search`'s hypotheses, as many as its parameters ask for), the set
    of distinct per-example parameter values, which fixes that axis.
    """
    key = []
    for name in sorted(signature.inputs):
        array = arrays[name]
        if array.ndim == 0:
            key.append((name, array.item() if array.dtype == object else array.tobytes()))
    if has_fixed_axes(signature.outputs):
        columns = [
            arrays[name].tolist()
            for name in sorted(signature.inputs)
            if signature.inputs[name].shape.rank is None and arrays[name].ndim == 1
        ]
        if columns:
            key.append(("per-example", frozenset(zip(*columns))))
    return tuple(key)


@dataclasses.dataclass(eq=False)
class _Request:
    arrays: dict
    rows: int
    future: asyncio.Future
    # Set on the event loop once nobody waits for the answer (the request timed out, its client left);
    # read by the worker that would run it, which then skips it.
    abandoned: bool = False

    def __post_init__(self):
        self.future.add_done_callback(self._mark_abandoned)

    def _mark_abandoned(self, future):
        self.abandoned = future.cancelled()


def _run_live(signature: Signature, batch: list) -> tuple:
    """In a worker: runs the requests of `batch` that someone still waits for, merged into one call.

    A request can wait in the pool's queue longer than its deadline; running it then only delays the
    requests behind it (every distinct set of scalars queues its own batches), so it is skipped.

    Returns:
        `(live, outputs)`: the requests run and their merged outputs, or `([], None)`.
    """
    live = [request for request in batch if not request.abandoned]
    if not live:
        return live, None
    merged = {
        # A request's scalars are its batch's key, so every request of the batch has the same.
        name: np.concatenate([r.arrays[name] for r in live]) if array.ndim else array
        for name, array in live[0].arrays.items()
    }
    return live, run_signature(signature, merged)


@dataclasses.dataclass(eq=False)
class _Queue:
    pending: list = dataclasses.field(default_factory=list)
    in_flight: int = 0


class BatchScheduler:
    """Runs predictions in a thread pool, batching concurrent requests of rank-1 signatures.

    Args:
        max_batch_size: most examples merged into one call.
        num_batch_threads: most calls of one signature running at once; also the pool size.
        enable_batching: False runs every request as its own call (still concurrently).
    """

    def __init__(self, max_batch_size: int = 64, num_batch_threads: int = 4, enable_batching: bool = True):
        if max_batch_size < 1 or num_batch_threads < 1:
            raise ValueError(
                f"max_batch_size and num_batch_threads must be >= 1, got {max_batch_size}, {num_batch_threads}"
            )
        self.max_batch_size = max_batch_size
        self.num_batch_threads = num_batch_threads
        self.enable_batching = enable_batching
        # Unbatched signatures share the pool, so size it for several signatures at once.
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=2 * num_batch_threads, thread_name_prefix="predict"
        )
        self._queues = {}

    async def predict(self, signature: Signature, arrays: dict) -> dict:
        """Runs `signature` on `arrays` (input name -> array), possibly batched with others."""
        loop = asyncio.get_running_loop()
        batchable = self.enable_batching and is_batchable(signature)
        sizes = {arrays[name].shape[0] for name, spec in signature.inputs.items() if spec.shape.rank == 1}
        # Inputs of different lengths would be paired wrongly once concatenated: run those alone.
        if not batchable or len(sizes) != 1 or 0 in sizes or not _fits_rows(signature, arrays, min(sizes)):
            return await loop.run_in_executor(self._executor, run_signature, signature, arrays)
        request = _Request(arrays, sizes.pop(), loop.create_future())
        key = (signature, _scalar_key(signature, arrays))
        queue = self._queues.setdefault(key, _Queue())
        queue.pending.append(request)
        self._start_batches(key, queue)
        return await request.future

    def shutdown(self):
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _start_batches(self, key: tuple, queue: _Queue):
        while queue.pending and queue.in_flight < self.num_batch_threads:
            batch, rows = [], 0
            while queue.pending and (not batch or rows + queue.pending[0].rows <= self.max_batch_size):
                request = queue.pending.pop(0)
                batch.append(request)
                rows += request.rows
            queue.in_flight += 1
            asyncio.ensure_future(self._run_batch(key, queue, batch))
        if not queue.pending and not queue.in_flight:
            self._queues.pop(key, None)

    async def _run_batch(self, key: tuple, queue: _Queue, batch: list):
        loop = asyncio.get_running_loop()
        signature = key[0]
        try:
            batch = [request for request in batch if not request.future.done()]  # Drop cancelled.
            if len(batch) == 1:
                await self._run_alone(signature, batch[0])
            elif batch:
                try:
                    batch, outputs = await loop.run_in_executor(self._executor, _run_live, signature, batch)
                except ServingError:
                    # One bad request must not fail its neighbours: rerun each on its own.
                    for request in batch:
                        await self._run_alone(signature, request)
                else:
                    if not batch:
                        return
                    total = sum(r.rows for r in batch)
                    if any(array.shape[:1] != (total,) for array in outputs.values()):
                        shapes = {name: list(array.shape) for name, array in outputs.items()}
                        error = ServingError(
                            f"Signature {quoted(signature.name)} answered a batch of {total} with outputs of "
                            f"shapes {json.dumps(shapes)}; expected [{total}] each",
                            500,
                        )
                        for request in batch:
                            if not request.future.done():
                                request.future.set_exception(error)
                        return
                    for request, part in zip(batch, split_outputs(outputs, [r.rows for r in batch])):
                        if not request.future.done():
                            request.future.set_result(part)
        except Exception as error:  # Never leave a request waiting forever.
            logging.exception("Batching failed for signature '%s'", signature.name)
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(
                        ServingError(f"Internal batching error ({type(error).__name__}); see the zoo-serve log", 500)
                    )
        finally:
            queue.in_flight -= 1
            self._start_batches(key, queue)

    async def _run_alone(self, signature: Signature, request: _Request):
        loop = asyncio.get_running_loop()
        try:
            live, outputs = await loop.run_in_executor(self._executor, _run_live, signature, [request])
        except Exception as error:
            if not request.future.done():
                request.future.set_exception(error)
        else:
            if live and not request.future.done():
                request.future.set_result(outputs)
