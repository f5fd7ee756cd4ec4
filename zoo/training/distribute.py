"""`--config.strategy`: the `tf.distribute` strategy that trains, and which process is the chief.

    auto          the accelerator that is there: a TF_CONFIG cluster, a TPU, all GPUs, else one device
                  (`mirrored` over the CPU's replicas with `--config.cpu_replicas` >= 2)
    one_device    the first GPU, else the CPU (TensorFlow's default strategy)
    mirrored      all local GPUs (all logical CPUs when there is no GPU: see `split_cpu`), one process
    multi_worker  MultiWorkerMirroredStrategy over the TF_CONFIG cluster, one process per worker
    tpu           TPUStrategy through TPUClusterResolver (a Colab TPU, a Cloud TPU VM, a TPU node)

A multi-worker strategy has to exist before TensorFlow runs its first op, so the trainer
resolves the strategy before it reads any data.
"""

import hashlib
import json
import os
import shutil
import tempfile

import keras
import tensorflow as tf

from zoo import machine
from zoo.constants import CPU_REPLICA_STRATEGIES, STRATEGIES, SWITCH_VALUES

# Device files of a Cloud TPU VM (and of Colab's TPU runtime): v2-v4 chips, v5 and later.
_TPU_DEVICE_FILES = ("/dev/accel0", "/dev/vfio/0")


def cluster_tasks(environ=None):
    """The number of tasks of the `TF_CONFIG` cluster in `environ` (0 without one)."""
    text = (os.environ if environ is None else environ).get("TF_CONFIG", "")
    if not text:
        return 0
    try:
        cluster = json.loads(text).get("cluster", {})
    except (json.JSONDecodeError, AttributeError):
        raise ValueError(f"TF_CONFIG is not a JSON object with a 'cluster': {text[:200]!r}") from None
    return sum(len(tasks) for kind, tasks in cluster.items() if kind in ("chief", "worker"))


def auto_strategy(environ=None, gpus=None, tpu_device_files=_TPU_DEVICE_FILES, cpu_replicas=0):
    """The strategy name `auto` stands for on this machine (see the module docstring)."""
    environ = os.environ if environ is None else environ
    if cluster_tasks(environ) > 1:
        return "multi_worker"
    if environ.get("TPU_NAME") or environ.get("COLAB_TPU_ADDR") or any(map(os.path.exists, tpu_device_files)):
        return "tpu"
    gpus = len(tf.config.list_physical_devices("GPU")) if gpus is None else gpus
    return "mirrored" if gpus > 1 or (not gpus and cpu_replicas > 1) else "one_device"


def split_cpu(replicas):
    """Splits the CPU into `replicas` logical devices for `mirrored`: each op on `cores // replicas` threads.

    TensorFlow's intra-op threads (those one op, e.g. a matrix product, spreads over) become
    `max(1, cores // replicas)` and its inter-op threads (ops run at once) `replicas`, so the
    replicas' ops run side by side: while one replica's time loop runs its small serial ops,
    the other's fill the cores that would idle. It must come before TensorFlow starts.

    Raises:
      ValueError: TensorFlow has already started in this process with another configuration.
    """
    cpu = tf.config.list_physical_devices("CPU")[0]
    threads = max(1, machine.usable_cpus() // replicas)
    current = tf.config.get_logical_device_configuration(cpu) or []
    if len(current) == replicas and tf.config.threading.get_intra_op_parallelism_threads() == threads:
        return  # already split so (a second run in this process)
    try:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(replicas)
    except RuntimeError:
        raise ValueError(f"cpu_replicas={replicas}: TensorFlow already runs in this process, and its CPU can no "
                         "longer be split; expected a fresh process (zoo-train, or train_and_evaluate before any "
                         "TensorFlow op)") from None


def split_cpu_as_configured(config):
    """`split_cpu` when `config` trains replicas of the CPU (`cpu_replicas` >= 2, strategy `auto` or
    `mirrored`, no GPU); a no-op otherwise, and for values validation refuses. Call it before
    anything runs TensorFlow: validating a config already builds layers. ValueError for more replicas
    than a batch's sentences (`batch_size`, or `batch_tokens` when set) could ever give work."""
    replicas, name = config.get("cpu_replicas", 0), config.get("strategy", "auto")
    if isinstance(replicas, int) and name in CPU_REPLICA_STRATEGIES:
        field = "batch_tokens" if config.get("batch_tokens") else "batch_size"
        if isinstance(config.get(field), int) and replicas > config[field] >= 1:  # 10**9 replicas fill the memory
            raise ValueError(f"cpu_replicas={replicas} (expected at most {field}={config[field]}: each replica "
                             "takes a share of a batch's sentences)")
        _split_for(auto_strategy(cpu_replicas=replicas) if name == "auto" else name, replicas)


def _split_for(name, cpu_replicas):
    """`split_cpu` where strategy `name` (`auto` resolved) trains replicas of the CPU: `mirrored` without GPUs."""
    if name == "mirrored" and cpu_replicas > 1 and not tf.config.list_physical_devices("GPU"):
        split_cpu(cpu_replicas)


def resolve_strategy(name, tpu="", cpu_replicas=0):
    """A `tf.distribute.Strategy` for a strategy name.

    Args:
      name: one of `STRATEGIES`.
      tpu: the TPU for `tpu`: a name or `grpc://` address; "" is `$TPU_NAME`, else the
        local TPU (Cloud TPU VM, Colab).
      cpu_replicas: >= 2: on a machine without GPUs, `mirrored` (and `auto`) train that many
        replicas on the CPU (`split_cpu`); 0 or 1: the CPU is one device.

    Raises:
      ValueError: an unknown name, `multi_worker` without a `TF_CONFIG` cluster, `tpu` without
        a TPU, or `cpu_replicas` >= 2 with a strategy other than `auto` or `mirrored`.
    """
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; expected one of {list(STRATEGIES)}")
    if cpu_replicas > 1 and name not in CPU_REPLICA_STRATEGIES:
        raise ValueError(f"cpu_replicas={cpu_replicas} trains replicas of the CPU under strategy 'mirrored' or "
                         f"'auto', not {name!r}; expected cpu_replicas=0 or strategy=mirrored")
    if name == "auto":
        name = auto_strategy(cpu_replicas=cpu_replicas)
    if name == "one_device":  # without GPUs: the default strategy, whose fit reads the dataset as it is (scaling.md)
        gpus = tf.config.list_logical_devices("GPU")
        if gpus or tf.distribute.has_strategy():  # (inside another strategy's scope: a strategy of its own)
            return tf.distribute.OneDeviceStrategy(gpus[0].name if gpus else "/cpu:0")
        return tf.distribute.get_strategy()
    if name == "mirrored":
        _split_for(name, cpu_replicas)
        devices = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([device.name for device in devices])
    if name == "multi_worker":
        if not cluster_tasks():
            raise ValueError("strategy 'multi_worker' needs TF_CONFIG, e.g. "
                             '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
                             '"task": {"type": "worker", "index": 0}}; received none')
        return tf.distribute.MultiWorkerMirroredStrategy()
    return _tpu_strategy(tpu or os.environ.get("TPU_NAME") or "local")


def _tpu_strategy(tpu):
    """TPUStrategy on `tpu` ("local", a name or a `grpc://` address); ValueError naming it where none is found."""
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (tf.errors.NotFoundError, OSError, ValueError) as error:  # no TPU here; a name GCE cannot resolve
        reason = str(error).splitlines()[0].split(". ")[0][:200]  # TensorFlow's first sentence
        raise ValueError(f"strategy 'tpu' found no TPU {tpu!r} ({reason}); expected a TPU machine (a Cloud TPU VM, "
                         "Colab's TPU runtime), --config.tpu=NAME of a TPU node, or strategy=auto") from None
    return tf.distribute.TPUStrategy(resolver)


def is_multi_worker(strategy):
    """True for a strategy whose replicas live in more than one process."""
    return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and cluster_tasks() > 1


def is_chief(strategy):
    """True in the one process that writes the workdir: the `chief` task, else worker 0."""
    if not is_multi_worker(strategy):
        return True
    resolver = strategy.cluster_resolver
    if resolver.task_type == "chief":
        return True
    return resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in resolver.cluster_spec().jobs


def private_dir(workdir, strategy):
    """Where this process writes: `workdir` for the chief, an emptied temporary directory for the others.

    Every worker of a multi-worker strategy saves its checkpoints and best model (the save
    takes part in collective ops), but only the chief's may land in the workdir. The
    directory is named after the task and the workdir, so a rerun after a kill reuses it.
    """
    if is_chief(strategy):
        return workdir
    resolver = strategy.cluster_resolver
    digest = hashlib.sha1(os.path.abspath(workdir).encode("utf-8")).hexdigest()[:12]
    path = os.path.join(tempfile.gettempdir(), f"zoo-{resolver.task_type}-{resolver.task_id}-{digest}")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def broadcast_from_chief(strategy, values):
    """The chief's list of floats on every worker (one all-gather); `values` elsewhere is any list of the same length.

    Workers that take decisions from these values (early stopping, the time budget) then
    take the same ones, as their collective ops require.
    """
    if not is_multi_worker(strategy):
        return [float(v) for v in values]
    row = tf.constant([[1.0 if is_chief(strategy) else 0.0, *map(float, values)]], tf.float64)
    rows = strategy.gather(strategy.experimental_distribute_values_from_function(lambda context: row), axis=0)
    rows = rows.numpy()  # (replicas, 1 + len(values)); the chief's rows start with 1
    return [float(v) for v in rows[rows[:, 0] == 1.0][0, 1:]]


def build_for_fit(model, batch):
    """Builds from a local `batch` what Keras' `fit` would build from its first batch.

    Keras' `fit` (TensorFlow backend), when the model holds its strategy, first averages the
    replicas' parts of its first input batch (one `Strategy.reduce`), built or not: that fails
    where the parts differ in shape (a batch split unevenly over replicas of a CPU,
    `split_cpu`), and MultiWorkerMirroredStrategy refuses the nested reduce. Here the model is
    built from `batch` and forgets its strategy, which `fit` then finds in the scope it is
    called in: call this and `fit` inside `strategy.scope()`.
    """
    model._symbolic_build(data_batch=batch)
    model._distribute_strategy = None


def prepare_multi_worker_fit(model, batch):
    """Lets Keras' `fit` (TensorFlow backend) train under MultiWorkerMirroredStrategy.

    The model is built from a local `batch` (`build_for_fit`), and the step's scalar metrics,
    which Keras averages over axis 0 (the strategy refuses that too), get a leading axis of
    one, over which the workers' values are averaged.
    """
    build_for_fit(model, batch)
    train_step = model.train_step
    model.train_step = lambda data: {name: keras.ops.reshape(value, (1,)) for name, value in train_step(data).items()}


def strategy_name(strategy):
    """The `STRATEGIES` name of a strategy object (`one_device` for the default strategy)."""
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return "multi_worker"
    if isinstance(strategy, tf.distribute.TPUStrategy):
        return "tpu"
    return "mirrored" if isinstance(strategy, tf.distribute.MirroredStrategy) else "one_device"


def accelerator(strategy):
    """`"tpu"`, `"gpu"` or `"cpu"`: what the strategy's replicas run on (for the default strategy, where ops go)."""
    try:
        devices = " ".join(strategy.extended.worker_devices).upper()
    except RuntimeError:  # the default strategy names no devices
        devices = "GPU" if tf.config.list_logical_devices("GPU") else "CPU"
    return "tpu" if "TPU" in devices else "gpu" if "GPU" in devices else "cpu"


def _switch(field, value):
    """`value` of an auto/true/false field, lower-cased; `ValueError` naming `field` for anything else."""
    text = str(value).lower()
    if text not in SWITCH_VALUES:
        raise ValueError(f"{field} must be 'auto', 'true' or 'false', got {value!r}")
    return text


def resolve_jit_compile(value, strategy, encoder_implementation="zoo"):
    """`--config.jit_compile`: `auto` compiles with XLA on GPUs and TPUs, not on CPUs, and never
    with Keras' recurrent layers (`encoder_implementation="keras"`: cuDNN's kernels, which XLA cannot
    compile; `true` is then an error)."""
    text = _switch("jit_compile", value)
    if encoder_implementation == "keras":
        if text == "true":
            raise ValueError("jit_compile=true cannot compile encoder_implementation='keras' (Keras' LSTM/GRU "
                             "layers run cuDNN's kernels, which XLA cannot compile); expected jit_compile=auto "
                             "or false, or encoder_implementation='zoo'")
        return False
    return accelerator(strategy) != "cpu" if text == "auto" else text == "true"


def resolve_static_shapes(value, jit_compile, strategy):
    """`--config.static_shapes`: `auto` pads to bucket lengths when XLA compiles or several replicas share a
    batch, unless they are replicas of one CPU (`split_cpu`), which take any batch shape as one device does."""
    text = _switch("static_shapes", value)
    if text != "auto":
        return text == "true"
    return jit_compile or (strategy.num_replicas_in_sync > 1 and not is_split_cpu(strategy))


def is_split_cpu(strategy):
    """True for `mirrored` over several logical devices of one CPU (`split_cpu`)."""
    return (strategy_name(strategy) == "mirrored" and accelerator(strategy) == "cpu"
            and strategy.num_replicas_in_sync > 1)


def resolve_steps_per_execution(value, strategy, steps_per_epoch=None):
    """`--config.steps_per_execution`: 0 means 100 on TPUs (within an epoch), 1 elsewhere; more than 1
    is refused on several GPUs, CPU replicas or workers, where Keras' fit fails on it."""
    if value < 0:
        raise ValueError(f"steps_per_execution must be >= 0, got {value}")
    if value == 0:
        value = 100 if accelerator(strategy) == "tpu" else 1
    value = max(1, min(value, steps_per_epoch or value))
    if value > 1 and accelerator(strategy) != "tpu" and strategy.num_replicas_in_sync > 1:
        raise ValueError(f"steps_per_execution={value} with {strategy.num_replicas_in_sync} replicas of strategy "
                         f"{strategy_name(strategy)!r}: Keras' fit fails on several steps per call under it "
                         "(keras-team/keras#19246); expected steps_per_execution=0 or 1, or strategy=one_device")
    return value


def shard_by_data(dataset):
    """Shards a dataset between workers by element: in-memory pairs have no files to shard by."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return dataset.with_options(options)
