"""Kernel gradients taken after the time loop (`LoopKernels`) equal those taken inside it.

The deferral runs in training (`training=True`); the models here have no dropout, so a
training call computes the same function as an inference call."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import zoo.models
from zoo.models.loop_kernels import LoopKernels

SOURCE = np.array([[5, 6, 7, 8, 0, 0], [9, 10, 11, 12, 13, 14]], dtype="int32")
TARGET_IN = np.array([[1, 5, 6, 0, 0], [1, 7, 8, 9, 10]], dtype="int32")


def _loss_and_gradients(model, deferred, monkeypatch, training=True):
    monkeypatch.setattr(LoopKernels, "enabled", deferred)
    weights = tf.random.stateless_uniform((2, 5, model.target_vocab_size), (1, 2))
    mask = tf.cast(TARGET_IN != 0, "float32")[..., None]
    with tf.GradientTape() as tape:
        log_probs = tf.nn.log_softmax(model((SOURCE, TARGET_IN), training=training))
        loss = tf.reduce_sum(log_probs * weights * mask)
    return float(loss), [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_variables)]


@pytest.mark.parametrize(
    "preset, overrides",
    [
        ("luong_general", {}),
        ("luong_general", {"input_feeding": False, "decoder_layers": 2}),
        ("luong_dot", {"encoder_cell": "gru", "decoder_units": 16}),
        ("luong_general", {"decoder_cell": "gru"}),
        ("bahdanau", {}),  # the context's and the recurrent kernels
        ("bahdanau", {"decoder_cell": "gru"}),  # the context's kernel only
        ("reduced_rank", {}),  # keys of a projected query
        ("luong_concat", {}),  # not a dot-product score: only the values' gradient after the loop
    ],
)
def test_gradients_after_the_loop_equal_the_gradients_inside_it(preset, overrides, monkeypatch):
    keras.utils.set_random_seed(0)
    sizes = dict(embedding_dim=16, encoder_units=8, decoder_units=12, encoder_layers=2, dropout=0.0)
    model = zoo.models.build(preset, 50, 60, **dict(sizes, **overrides))
    deferred_loss, deferred = _loss_and_gradients(model, True, monkeypatch)
    inside_loss, inside = _loss_and_gradients(model, False, monkeypatch)
    assert deferred_loss == pytest.approx(inside_loss, rel=1e-6)
    assert len(deferred) == len(inside) == len(model.trainable_variables)
    for variable, a, b in zip(model.trainable_variables, deferred, inside):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6, err_msg=variable.path)


def test_a_kernel_without_its_step_inputs_fails_clearly():
    kernels = LoopKernels("float32")
    kernel = tf.Variable(tf.ones((3, 4)))
    with tf.GradientTape() as tape:
        kernels.add("w", kernel)
        loss = tf.reduce_sum(kernels.route(tf.zeros((2, 1, 4)), ["w"]))
    with pytest.raises(RuntimeError, match="no step inputs were given for the kernel 'w'"):
        tape.gradient(loss, kernel)


@pytest.mark.parametrize("preset", ["luong_dot", "reduced_rank", "luong_concat", "bahdanau"])
def test_the_same_gradients_in_a_graph_of_unknown_lengths(preset):
    keras.utils.set_random_seed(0)
    model = zoo.models.build(preset, 50, 60, embedding_dim=16, encoder_units=8, decoder_units=16, encoder_layers=1,
                             dropout=0.0)
    weights = tf.random.stateless_uniform((2, 5, model.target_vocab_size), (1, 2))

    def gradients(source, target_in):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.log_softmax(model((source, target_in), training=True)) * weights)
        return [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_variables)]

    spec = tf.TensorSpec([None, None], tf.int32)
    graph = tf.function(gradients, input_signature=[spec, spec])(SOURCE, TARGET_IN)
    for variable, a, b in zip(model.trainable_variables, graph, gradients(SOURCE, TARGET_IN)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6, err_msg=variable.path)


def test_a_subclass_hook_without_extra_kernel_still_gets_the_same_gradients(monkeypatch):
    from zoo.models.luong import LuongSeq2Seq

    class OldHook(LuongSeq2Seq):  # add_loop_kernels as written before it took `extra_kernel`
        def add_loop_kernels(self, kernels):
            return super().add_loop_kernels(kernels)

    sizes = dict(embedding_dim=16, encoder_units=8, decoder_units=12, encoder_layers=2, dropout=0.0)
    keras.utils.set_random_seed(0)
    model = zoo.models.build("luong_general", 50, 60, **sizes)
    keras.utils.set_random_seed(0)
    old = OldHook(**{**model.get_config(), "name": "old_hook"})
    old.build()
    old.set_weights(model.get_weights())
    loss, gradients = _loss_and_gradients(model, True, monkeypatch)
    old_loss, old_gradients = _loss_and_gradients(old, True, monkeypatch)
    assert old_loss == pytest.approx(loss, rel=1e-6)
    for variable, a, b in zip(model.trainable_variables, gradients, old_gradients):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7, err_msg=variable.path)


def _custom_gradient_ops(graph_def):
    """The ops that `tf.custom_gradient` leaves in a graph (with its function library)."""
    nodes = list(graph_def.node) + [n for f in graph_def.library.function for n in f.node_def]
    return [n.name for n in nodes if "_gradient_op_type" in n.attr]


@pytest.mark.parametrize("preset", ["luong_general", "bahdanau"])
def test_inference_defers_nothing_and_its_gradients_are_still_exact(preset, monkeypatch):
    keras.utils.set_random_seed(0)
    model = zoo.models.build(preset, 50, 60, embedding_dim=16, encoder_units=8, decoder_units=12, encoder_layers=2,
                             dropout=0.0)
    spec = tf.TensorSpec([None, None], tf.int32)
    graphs = {training: tf.function(lambda s, t, training=training: model((s, t), training=training))
              .get_concrete_function(spec, spec).graph.as_graph_def() for training in (True, False)}
    assert _custom_gradient_ops(graphs[True])  # training: the kernels' gradients after the loop
    assert not _custom_gradient_ops(graphs[False])  # inference: no deferral, nothing to load or run for it
    training_loss, deferred = _loss_and_gradients(model, True, monkeypatch, training=True)
    inference_loss, inside = _loss_and_gradients(model, True, monkeypatch, training=False)
    assert inference_loss == pytest.approx(training_loss, rel=1e-6)
    for variable, a, b in zip(model.trainable_variables, deferred, inside):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6, err_msg=variable.path)


@pytest.mark.parametrize("dtype, integer", [("bfloat16", tf.int16), ("float32", tf.int32), ("float16", tf.int16)])
def test_recorded_step_inputs_leave_the_loop_as_integers_and_come_back_bit_for_bit(dtype, integer):
    # A floating-point stack would be a differentiable output of the loop, whose gradient would start
    # from a zero-filled list; integers of the same width are not, and the bitcast copies nothing.
    kernels = LoopKernels(dtype)
    kernels.add("w", tf.ones((3, 4)))
    steps = tf.cast(tf.random.stateless_normal((5, 2, 3), (3, 4)) * 1e3, dtype)  # (T, B, D)
    recorded = []
    for t in range(5):
        kernels.use("w", steps[t])
        recorded.append(kernels.recorded())
        assert kernels.recorded() == {}  # forgotten once handed over
    assert all(step["w"].dtype == integer for step in recorded)
    kernels.set_inputs({"w": tf.stack([step["w"] for step in recorded])})
    back = kernels._inputs["w"]
    assert back.dtype == steps.dtype and back.shape == steps.shape
    np.testing.assert_array_equal(tf.bitcast(back, integer).numpy(), tf.bitcast(steps, integer).numpy())
