"""Where a run trains: the strategy, this process's part in it, the model under its scope, `fit`.

See docs/scaling.md. Only the chief writes the workdir; every other worker of a cluster
writes into a directory of its own and gets the chief's dev scores and stop decisions.
"""

import dataclasses
import logging
import os
import warnings

import keras
import tensorflow as tf

from zoo import machine
from zoo.data import DataError
from zoo.data.tsv_stream import TsvScan
from zoo.training import callbacks as zoo_callbacks
from zoo.training import distribute, precision
from zoo.training.inputs import build_model, train_batches
from zoo.training.optimization import compile_model
from zoo.training.sampled_vocabulary import with_sampled_vocabulary
from zoo.training.streaming import num_pairs


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where this process trains and what it writes (docs/scaling.md)."""

    strategy: tf.distribute.Strategy
    chief: bool  # the one process that writes the workdir and decodes the dev set
    own_dir: str  # where this process writes: the workdir for the chief, a temporary directory otherwise
    share: object  # `[float] -> [float]`, the chief's values on every worker; None in one process


def place(config, workdir):
    """The strategy of `config.strategy` and this process's part in it; call it before any TensorFlow op."""
    strategy = distribute.resolve_strategy(config.strategy, config.tpu, config.get("cpu_replicas", 0))
    share = None
    if distribute.is_multi_worker(strategy):
        share = lambda values: distribute.broadcast_from_chief(strategy, values)  # noqa: E731
    return Placement(strategy, distribute.is_chief(strategy), distribute.private_dir(workdir, strategy), share)


@dataclasses.dataclass(frozen=True)
class Training:
    """The model, its restored state and the data `fit` gets."""

    model: keras.Model
    state: zoo_callbacks.TrainingState
    manager: tf.train.CheckpointManager
    latest: str  # the checkpoint restored, or None
    dataset: tf.data.Dataset  # repeated training batches
    steps_per_epoch: int
    batches_per_pass: int
    tokens_per_batch: float


def prepare(config, placement, workdir, train_pairs, tokenizers, log):
    """The model under the strategy's scope, restored from the workdir's newest checkpoint, and its data."""
    strategy, replicas = placement.strategy, placement.strategy.num_replicas_in_sync
    sizes = [tokenizer.vocab_size for tokenizer in tokenizers]
    chief_sizes = sizes if placement.share is None else [int(size) for size in placement.share(sizes)]
    if chief_sizes != sizes:
        raise ValueError(f"this worker built vocabularies of {sizes} tokens, the chief {chief_sizes}; "
                         "expected every worker to read the same training data")
    jit_compile = distribute.resolve_jit_compile(config.jit_compile, strategy,
                                                config.get("encoder_implementation", "zoo"))
    static_shapes = distribute.resolve_static_shapes(config.static_shapes, jit_compile, strategy)
    if static_shapes and replicas > 1 and config.batch_tokens:
        raise ValueError(f"batch_tokens={config.batch_tokens} gives batches of any size, which static shapes "
                         f"cannot split evenly across {replicas} replicas; expected batch_tokens=0 (batch_size) "
                         "or static_shapes=false")
    if static_shapes and config.batch_size % replicas:
        raise ValueError(f"batch_size {config.batch_size} does not split evenly across {replicas} replicas; "
                         f"expected a multiple of {replicas}")
    state = zoo_callbacks.TrainingState()
    latest = readable_checkpoint(os.path.join(workdir, "checkpoints"), log, repair=placement.chief)  # the chief's
    if latest:
        tf.train.Checkpoint(state=state).read(latest).expect_partial()
    # Seeded by (seed, epoch): a resumed run sees the same kind of fresh shuffle order.
    dataset, batches, tokens, batched = train_batches(config, train_pairs, tokenizers, static_shapes=static_shapes,
                                             seed=config.seed * 100003 + int(state.epoch.numpy()))
    if not batches and static_shapes:
        raise DataError(f"{num_pairs(train_pairs)} training pairs make no full batch of {_batch(config)}; "
                        f"expected more pairs or a smaller {'batch_tokens' if config.batch_tokens else 'batch_size'}")
    if not batches:
        raise DataError(no_pair_left(config, num_pairs(train_pairs)))
    steps_per_epoch = config.steps_per_epoch or batches
    per_call = distribute.resolve_steps_per_execution(config.steps_per_execution, strategy, steps_per_epoch)
    with strategy.scope():
        model = compile_model(build_model(config, *sizes), config, jit_compile, per_call, lr_scale=state.add_lr_scale())
    if steps_per_epoch % per_call:  # Keras runs whole host calls: an epoch of 5 steps at 4 a call ran 8, unsaid
        rounded = -(-steps_per_epoch // per_call) * per_call
        log(f"  an epoch is {rounded} steps, not {steps_per_epoch}: a whole number of host calls of "
            f"steps_per_execution={per_call}")
        steps_per_epoch = rounded
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer, state=state)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(placement.own_dir, "checkpoints"),
                                         max_to_keep=config.checkpoints_to_keep)
    if latest:
        _check_loss_scaling(latest, model, config.precision)
        state.restore(checkpoint, latest)
    log(f"zoo-train: recipe {config.recipe}, preset {config.model}, {model.count_params():,} parameters; "
        f"strategy {distribute.strategy_name(strategy)} with {replicas} replica(s){_cpu_split(strategy)}, "
        f"{model.dtype_policy.name}{precision.describe_auto(config.precision)}, "
        f"XLA {'on' if jit_compile else 'off'}, {'static' if static_shapes else 'per-batch'} shapes")
    sampled = config.get("sampled_vocabulary", 0)
    dataset = with_sampled_vocabulary(dataset.repeat(), sizes[1], sampled,
                                      seed=config.seed * 100003 + int(state.epoch.numpy()))
    log(f"  data: {_data(config, train_pairs, batches, static_shapes, batched)}; vocab {sizes[0]} source / {sizes[1]} target "
        "tokens" + (" (shared)" if config.shared_vocab else "")
        + (f"; each batch's softmax over >= {sampled} of them (sampled_vocabulary)" if sampled else ""))
    return Training(model, state, manager, latest, dataset, steps_per_epoch, batches, tokens / batches)


def readable_checkpoint(directory, log, repair=False):
    """The newest checkpoint in `directory` whose every tensor reads back, or None when none was saved.

    A damaged one (a copy cut short, a disk that filled up) is skipped with a warning naming it, and the
    next older one resumes the run. A damaged `checkpoint` list (which TensorFlow would ignore, training
    afresh over the workdir, or refuse when empty), or one none of whose checkpoints reads back while
    other `ckpt-N.index` files lie there, is replaced by those files; with `repair` (the process that
    writes the workdir) the list is rewritten with them, so that the `CheckpointManager` rotates them out
    as it saves. Raises ValueError when checkpoints were saved but none reads back.
    """
    listed = _listed_checkpoints(directory)
    path = _newest_readable(listed, log)
    if path is not None:
        return path
    numbered = _numbered_checkpoints(directory)
    names = {os.path.basename(other) for other in listed}
    unlisted = [other for other in numbered if os.path.basename(other) not in names]
    if unlisted:
        log(f"zoo-train: warning: {os.path.join(directory, 'checkpoint')} does not list "
            f"{'a checkpoint that reads back' if listed else 'the checkpoints there'}; taking the newest of their files")
    path = _newest_readable(unlisted, log)
    if path is not None and repair:
        others = [other for other in numbered if other != path] + [path]  # the damaged ones too
        # Their files' times, after the list's "last preserved" time: the manager deletes only those.
        times = [tf.io.gfile.stat(f"{other}.index").mtime_nsec / 1e9 for other in others]
        tensorflow_log = logging.getLogger("tensorflow")
        level = tensorflow_log.level
        tensorflow_log.setLevel(logging.ERROR)  # its deprecation notice is for TensorFlow's users, not ours
        try:
            tf.compat.v1.train.update_checkpoint_state(directory, path, all_model_checkpoint_paths=others,
                                                       all_model_checkpoint_timestamps=times,
                                                       last_preserved_timestamp=min(times) - 1)
        finally:
            tensorflow_log.setLevel(level)
    if path is None and (listed or unlisted):
        raise ValueError(f"no checkpoint in {directory} reads back; delete it to train afresh")
    return path


def _listed_checkpoints(directory):
    """The paths the `checkpoint` list in `directory` names, oldest first: none when it is missing or
    damaged (TensorFlow returns None for one it cannot parse, and raises for one that parses empty)."""
    try:
        saved = tf.train.get_checkpoint_state(directory)
    except ValueError:  # "Invalid checkpoint state loaded from ..."
        saved = None
    return list(saved.all_model_checkpoint_paths or [saved.model_checkpoint_path]) if saved else []


def _numbered_checkpoints(directory):
    """The `ckpt-N` paths whose `.index` file lies in `directory`, by N."""
    if not tf.io.gfile.isdir(directory):
        return []
    numbered = [name[len("ckpt-"):-len(".index")] for name in tf.io.gfile.listdir(directory)
                if name.startswith("ckpt-") and name.endswith(".index")]
    return [os.path.join(directory, f"ckpt-{n}") for n in sorted(filter(str.isdigit, numbered), key=int)]


def _newest_readable(paths, log):
    """The newest of `paths` whose every tensor reads back (a warning for each one skipped), or None."""
    for path in reversed(paths):
        try:
            reader = tf.train.load_checkpoint(path)
            for name in reader.get_variable_to_shape_map():
                reader.get_tensor(name)
        except (tf.errors.OpError, IndexError, ValueError) as error:
            log(f"zoo-train: warning: checkpoint {path} does not read back ({str(error).splitlines()[0]}); "
                "trying the one before it")
            continue
        return path
    return None


def _check_loss_scaling(path, model, precision):
    """ValueError where the checkpoint at `path` and this run differ in `mixed_float16`'s loss scaling, whose
    optimizer holds other variables (the restore would fail inside TensorFlow)."""
    saved = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    scaled = any(name.startswith("optimizer/inner_optimizer/") for name in saved)
    if scaled != isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer):
        trained, now = ("with", "without") if scaled else ("without", "with")
        raise ValueError(f"checkpoint {path} was trained {trained} mixed_float16's loss scaling, this run is "
                         f"{now} it ({model.dtype_policy.name}, precision={precision!r}); expected a precision "
                         f"that {'resolves to' if scaled else 'is not'} mixed_float16 to resume, or a new --workdir")


def _cpu_split(strategy):
    """" of the CPU's N cores, T thread(s) an op" for replicas of one CPU (`distribute.split_cpu`), else ""."""
    if not distribute.is_split_cpu(strategy):
        return ""
    threads = tf.config.threading.get_intra_op_parallelism_threads()
    return f" of the CPU's {machine.usable_cpus()} cores" + (f", {threads} thread(s) an op" if threads else "")


def _data(config, train, batches, static_shapes, batched=None):
    """The training pairs and the batches of a pass (`batched` pairs of them, if counted), and where a
    streamed file's numbers come from."""
    batch = f"batches of {'' if static_shapes else '<= '}{_batch(config)}"
    if not isinstance(train, TsvScan):
        return f"{len(train):,} training pairs{_left_out(config, len(train), batched, static_shapes)} ({batches} {batch})"
    return (f"{train.num_pairs:,} training pairs streamed from {train.path}, not held in memory (~{batches} {batch} "
            f"a pass; vocabulary and counts from a sample of {len(train.sample):,} pairs)")


def no_pair_left(config, pairs):
    """The error when the filters leave none of the `pairs` training pairs."""
    if not config.drop_long:
        return (f"no training pair of {pairs:,} is left after leaving out those with a side that tokenizes to no "
                "token; expected pairs with text the tokenizers keep on both sides")
    return (f"no training pair of {pairs:,} is left after leaving out those {_too_long(config)} or with a side of "
            "no token; expected longer limits or drop_long=False")


def _left_out(config, pairs, batched, static_shapes):
    """", N of them left out of the batches (why)" when a pass's batches hold fewer than all the pairs."""
    if batched is None or batched >= pairs:
        return ""
    reasons = ["a side with no token"]
    if config.drop_long:
        reasons.insert(0, _too_long(config))
    if static_shapes:
        reasons.append("a bucket's partial batch (static shapes)")
    return f", {pairs - batched:,} of them left out of the batches ({', or '.join(reasons)})"


def _too_long(config):
    """The `drop_long` filter, as the data line and the errors name it."""
    return (f"longer than max_source_length={config.max_source_length} or max_target_length="
            f"{config.max_target_length} tokens (drop_long)")


def _batch(config):
    """What a batch holds: "64" (sentences) or "2,000 tokens" (padded positions, see `make_dataset`)."""
    return f"{config.batch_tokens:,} tokens" if config.batch_tokens else f"{config.batch_size}"


def fit(config, placement, run, callbacks):
    """`model.fit` from the restored epoch, under the strategy's scope."""
    if distribute.is_multi_worker(placement.strategy):
        distribute.prepare_multi_worker_fit(run.model, next(iter(run.dataset)))
    with warnings.catch_warnings(), placement.strategy.scope():  # fit's shuffle does not apply to a tf.data input
        if distribute.is_split_cpu(placement.strategy):  # whose first batch may split unevenly
            distribute.build_for_fit(run.model, next(iter(run.dataset)))
        warnings.filterwarnings("ignore", message=".*shuffle=True.*was passed")
        run.model.fit(distribute.shard_by_data(run.dataset), epochs=config.num_epochs,
                      initial_epoch=int(run.state.epoch.numpy()), steps_per_epoch=run.steps_per_epoch,
                      callbacks=callbacks, verbose=config.verbose if placement.chief else 0)
