"""Strategy names, TF_CONFIG, chief detection and the XLA / steps-per-execution defaults (one process)."""

import json
import types

import pytest
import tensorflow as tf

from zoo.training import distribute

CLUSTER = {"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}, "task": {"type": "worker", "index": 1}}


def test_auto_picks_the_cluster_then_the_tpu_then_the_gpus(tmp_path):
    accel = tmp_path / "accel0"
    accel.write_text("")
    assert distribute.auto_strategy({"TF_CONFIG": json.dumps(CLUSTER)}, gpus=0, tpu_device_files=()) == "multi_worker"
    assert distribute.auto_strategy({}, gpus=0, tpu_device_files=(str(accel),)) == "tpu"
    assert distribute.auto_strategy({"TPU_NAME": "my-tpu"}, gpus=0, tpu_device_files=()) == "tpu"
    assert distribute.auto_strategy({}, gpus=4, tpu_device_files=()) == "mirrored"
    assert distribute.auto_strategy({}, gpus=1, tpu_device_files=()) == "one_device"
    assert distribute.auto_strategy({}, gpus=0, tpu_device_files=()) == "one_device"
    # cpu_replicas: replicas of the CPU where there is no accelerator, never instead of one.
    assert distribute.auto_strategy({}, gpus=0, tpu_device_files=(), cpu_replicas=2) == "mirrored"
    assert distribute.auto_strategy({}, gpus=0, tpu_device_files=(), cpu_replicas=1) == "one_device"
    assert distribute.auto_strategy({}, gpus=1, tpu_device_files=(), cpu_replicas=2) == "one_device"
    assert distribute.auto_strategy({"TPU_NAME": "t"}, gpus=0, tpu_device_files=(), cpu_replicas=2) == "tpu"
    one_task = {"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 0}}
    assert distribute.auto_strategy({"TF_CONFIG": json.dumps(one_task)}, gpus=0, tpu_device_files=()) == "one_device"


def test_tf_config_is_counted_and_a_broken_one_is_named():
    assert distribute.cluster_tasks({}) == 0
    assert distribute.cluster_tasks({"TF_CONFIG": json.dumps(CLUSTER)}) == 2
    with_chief = {"cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]}}
    assert distribute.cluster_tasks({"TF_CONFIG": json.dumps(with_chief)}) == 3
    with pytest.raises(ValueError, match="TF_CONFIG is not a JSON object"):
        distribute.cluster_tasks({"TF_CONFIG": "{not json"})


def test_bad_names_and_a_missing_cluster_are_refused(monkeypatch):
    with pytest.raises(ValueError, match=r"unknown strategy 'horovod'; expected one of \['auto', 'one_device'"):
        distribute.resolve_strategy("horovod")
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="strategy 'multi_worker' needs TF_CONFIG"):
        distribute.resolve_strategy("multi_worker")


def test_cpu_replicas_need_mirrored_and_a_fresh_process():
    with pytest.raises(ValueError, match="cpu_replicas=2 trains replicas of the CPU under strategy 'mirrored' or "
                                         "'auto', not 'one_device'"):
        distribute.resolve_strategy("one_device", cpu_replicas=2)
    tf.constant(1.0) + 1.0  # TensorFlow has started in this process
    with pytest.raises(ValueError, match="cpu_replicas=3: TensorFlow already runs in this process"):
        distribute.split_cpu(3)


def test_static_shapes_auto_follows_xla_and_accelerator_replicas():
    one = distribute.resolve_strategy("one_device")
    gpus = types.SimpleNamespace(num_replicas_in_sync=2,
                                 extended=types.SimpleNamespace(worker_devices=("/device:GPU:0", "/device:GPU:1")))
    assert distribute.resolve_static_shapes("auto", False, one) is False
    assert distribute.resolve_static_shapes("auto", True, one) is True
    assert distribute.resolve_static_shapes("auto", False, gpus) is True
    assert distribute.resolve_static_shapes("false", True, gpus) is False
    assert not distribute.is_split_cpu(one) and not distribute.is_split_cpu(gpus)
    # Replicas of a CPU (per-batch shapes): tests/training/test_mirrored.py, in a process of their own.


def test_one_device_on_a_cpu_machine_is_the_chief_and_compiles_nothing(tmp_path):
    strategy = distribute.resolve_strategy("one_device")
    assert strategy.num_replicas_in_sync == 1 and distribute.accelerator(strategy) == "cpu"
    assert distribute.strategy_name(strategy) == "one_device"
    assert distribute.strategy_name(distribute.resolve_strategy("mirrored")) == "mirrored"
    assert distribute.is_chief(strategy) and not distribute.is_multi_worker(strategy)
    assert distribute.private_dir(str(tmp_path), strategy) == str(tmp_path)
    assert distribute.broadcast_from_chief(strategy, [1.5, 2]) == [1.5, 2.0]
    assert distribute.resolve_jit_compile("auto", strategy) is False
    assert distribute.resolve_jit_compile("True", strategy) is True
    assert distribute.resolve_jit_compile(False, strategy) is False
    with pytest.raises(ValueError, match="jit_compile must be 'auto', 'true' or 'false', got 'yes'"):
        distribute.resolve_jit_compile("yes", strategy)
    assert distribute.resolve_steps_per_execution(0, strategy) == 1
    assert distribute.resolve_steps_per_execution(50, strategy, steps_per_epoch=20) == 20
    with pytest.raises(ValueError, match="steps_per_execution must be >= 0, got -1"):
        distribute.resolve_steps_per_execution(-1, strategy)


def test_one_device_on_a_cpu_machine_gives_fit_the_dataset_as_it_is():
    # TensorFlow's default strategy: Keras' fit iterates the dataset itself, not a distributed copy whose
    # input threads the end of fit waited for.
    strategy = distribute.resolve_strategy("one_device")
    assert strategy is tf.distribute.get_strategy() and not tf.distribute.has_strategy()
    dataset = tf.data.Dataset.range(3)
    assert strategy.experimental_distribute_dataset(dataset) is dataset
    with distribute.resolve_strategy("mirrored").scope():  # inside another strategy's scope: a strategy of its own
        inner = distribute.resolve_strategy("one_device")
    assert isinstance(inner, tf.distribute.OneDeviceStrategy) and distribute.accelerator(inner) == "cpu"


def test_data_sharding_policy():
    dataset = distribute.shard_by_data(tf.data.Dataset.range(4))
    assert dataset.options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.DATA


@pytest.mark.parametrize("device, kind, jit, steps", [("TPU", "tpu", True, 100), ("GPU", "gpu", True, 1)])
def test_accelerators_compile_and_tpus_run_many_steps_per_call(device, kind, jit, steps):
    devices = tuple(f"/job:worker/replica:0/task:0/device:{device}:{i}" for i in range(2))
    strategy = types.SimpleNamespace(extended=types.SimpleNamespace(worker_devices=devices))
    assert distribute.accelerator(strategy) == kind
    assert distribute.resolve_jit_compile("auto", strategy) is jit
    assert distribute.resolve_steps_per_execution(0, strategy, steps_per_epoch=500) == steps
    assert distribute.resolve_steps_per_execution(0, strategy, steps_per_epoch=30) == min(steps, 30)


def test_several_steps_per_call_are_refused_on_replicas_that_keras_fit_fails_on():
    # Keras' fit under MirroredStrategy with steps_per_execution > 1 fails with "You must feed a value for
    # placeholder tensor" (keras-team/keras#19246): on several GPUs, CPU replicas and workers.
    gpus = types.SimpleNamespace(num_replicas_in_sync=2,
                                 extended=types.SimpleNamespace(worker_devices=("/device:GPU:0", "/device:GPU:1")))
    with pytest.raises(ValueError, match=r"steps_per_execution=4 with 2 replicas of strategy 'one_device'.*"
                                         r"expected steps_per_execution=0 or 1"):
        distribute.resolve_steps_per_execution(4, gpus)
    assert distribute.resolve_steps_per_execution(0, gpus) == 1
    assert distribute.resolve_steps_per_execution(4, gpus, steps_per_epoch=1) == 1
    assert distribute.resolve_steps_per_execution(4, distribute.resolve_strategy("one_device")) == 4


def test_a_tpu_strategy_without_a_tpu_names_it(monkeypatch):
    monkeypatch.delenv("TPU_NAME", raising=False)
    with pytest.raises(ValueError, match=r"strategy 'tpu' found no TPU 'local' \(TPUs not found.*"
                                         r"expected a TPU machine"):
        distribute.resolve_strategy("tpu")


def test_more_cpu_replicas_than_a_batch_has_sentences_are_refused_before_the_split():
    tf.constant(1.0) + 1.0  # so that a split tried here could not happen (cpu_replicas=10**9 filled the memory)
    with pytest.raises(ValueError, match=r"cpu_replicas=33 \(expected at most batch_size=32: each replica takes"):
        distribute.split_cpu_as_configured({"cpu_replicas": 33, "strategy": "mirrored", "batch_size": 32})
    with pytest.raises(ValueError, match=r"cpu_replicas=10000 \(expected at most batch_tokens=4000"):
        distribute.split_cpu_as_configured({"cpu_replicas": 10**4, "batch_size": 1, "batch_tokens": 4000})
    # Not split under one_device: validation refuses cpu_replicas there, naming the strategy.
    distribute.split_cpu_as_configured({"cpu_replicas": 33, "strategy": "one_device", "batch_size": 32})
