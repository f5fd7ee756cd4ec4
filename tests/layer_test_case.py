"""The shared checks every zoo layer must pass, on any Keras backend.

`run_layer_test` builds the layer on concrete inputs and checks, in order:

1. weight counts (trainable and non-trainable) after the build;
2. the eager call: output shapes, dtypes and finiteness;
3. the config round-trip: `from_config(get_config())` gives an equal config,
   `keras.layers.deserialize(keras.layers.serialize(layer))` finds the class by
   its registered name, and both copies give the same outputs with the same weights;
4. the symbolic call on `keras.Input`s: output shapes with a `None` batch;
5. mixed precision under `mixed_float16` and `mixed_bfloat16`: variables stay
   float32, floating outputs come out in the compute dtype and are finite;
6. one `fit` step of a tiny functional model: finite loss, every trainable
   weight changes;
7. a `.keras` save/load round trip that gives the same outputs (up to float32 rounding).

Layer-specific invariants (for example "masked attention weights are exactly 0")
go in `output_check`, which runs on the float32 outputs and on the outputs of
every mixed-precision policy.

Example:

    run_layer_test(
        AdditiveAttention,
        init_kwargs={"units": 4},
        input_data=(query, value),          # positional tensors, numpy
        call_kwargs={"mask": mask},         # keyword tensors, numpy
        expected_output_shapes=((2, 8), (2, 5)),
        expected_num_trainable_weights=3,
    )
"""

import os
import tempfile

import keras
import numpy as np
from keras import ops

MIXED_PRECISION_POLICIES = ("mixed_float16", "mixed_bfloat16")


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _to_numpy(outputs):
    return tuple(ops.convert_to_numpy(o) for o in _as_tuple(outputs))


def _is_floating(dtype):
    return "float" in str(dtype)


def _call(layer, input_data, call_kwargs, **extra):
    return _as_tuple(layer(*input_data, **call_kwargs, **extra))


def _symbolic_inputs(input_data, call_kwargs):
    """`keras.Input`s with the shapes (batch left free) and dtypes of the arrays."""
    positional = [
        keras.Input(shape=x.shape[1:], batch_size=None, dtype=str(x.dtype), name=f"input_{i}")
        for i, x in enumerate(input_data)
    ]
    keyword = {
        name: keras.Input(shape=x.shape[1:], batch_size=None, dtype=str(x.dtype), name=name)
        for name, x in call_kwargs.items()
    }
    return positional, keyword


def _functional_model(layer, input_data, call_kwargs):
    positional, keyword = _symbolic_inputs(input_data, call_kwargs)
    outputs = layer(*positional, **keyword)
    return keras.Model(inputs=positional + list(keyword.values()), outputs=list(_as_tuple(outputs)))


def _model_inputs(input_data, call_kwargs):
    return list(input_data) + list(call_kwargs.values())


def _assert_same_outputs(actual, expected, message):
    """Equal up to float32 rounding: the same weights and inputs, but an eager call, a copy
    and a compiled model may fuse the arithmetic differently (on a GPU they differ in the
    last bit); a wrong or missing weight differs by far more."""
    assert len(actual) == len(expected), f"{message}: {len(actual)} outputs, expected {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6, err_msg=f"{message}: output {i} differs")


def run_layer_test(
    layer_cls,
    init_kwargs,
    input_data,
    expected_output_shapes,
    call_kwargs=None,
    expected_num_trainable_weights=0,
    expected_num_non_trainable_weights=0,
    output_check=None,
    run_mixed_precision_check=True,
    run_training_check=True,
    run_saving_check=True,
):
    """Runs the standard battery of layer checks (see the module docstring).

    Args:
        layer_cls: the layer class, registered with `keras.saving.register_keras_serializable`.
        init_kwargs: dict, the constructor arguments (without `dtype`).
        input_data: numpy array or tuple of arrays, the positional call arguments;
            the first dimension of each is the batch `B`.
        expected_output_shapes: shape or tuple of shapes of the outputs on `input_data`.
        call_kwargs: dict of keyword tensor arguments (numpy arrays with batch first,
            e.g. `{"mask": mask}`); they become `keras.Input`s in the symbolic checks.
        expected_num_trainable_weights: int, `len(layer.trainable_weights)` once built.
        expected_num_non_trainable_weights: int, `len(layer.non_trainable_weights)`.
        output_check: optional `fn(outputs)`, `outputs` a tuple of numpy arrays; called
            on the float32 outputs and on those of each mixed-precision policy.
        run_mixed_precision_check, run_training_check, run_saving_check: bools to skip
            checks that do not apply to a layer.
    """
    input_data = _as_tuple(input_data)
    call_kwargs = dict(call_kwargs or {})
    if isinstance(expected_output_shapes[0], int):
        expected_output_shapes = (expected_output_shapes,)
    expected_output_shapes = tuple(tuple(s) for s in expected_output_shapes)
    name = layer_cls.__name__

    # 1-2. Eager call and weight counts.
    layer = layer_cls(**init_kwargs)
    outputs = _to_numpy(_call(layer, input_data, call_kwargs))
    assert len(layer.trainable_weights) == expected_num_trainable_weights, (
        f"{name}: {len(layer.trainable_weights)} trainable weights "
        f"{[w.path for w in layer.trainable_weights]}, expected {expected_num_trainable_weights}"
    )
    assert len(layer.non_trainable_weights) == expected_num_non_trainable_weights, (
        f"{name}: {len(layer.non_trainable_weights)} non-trainable weights "
        f"{[w.path for w in layer.non_trainable_weights]}, "
        f"expected {expected_num_non_trainable_weights}"
    )
    assert tuple(o.shape for o in outputs) == expected_output_shapes, (
        f"{name}: eager output shapes {[o.shape for o in outputs]}, "
        f"expected {expected_output_shapes}"
    )
    for i, o in enumerate(outputs):
        if _is_floating(o.dtype):
            assert o.dtype == np.float32, f"{name}: output {i} has dtype {o.dtype}, expected float32"
            assert np.all(np.isfinite(o)), f"{name}: output {i} is not finite: {o}"
    if output_check is not None:
        output_check(outputs)

    # 3. Config round-trip, through from_config and through the registered name.
    config = layer.get_config()
    for restored in (
        layer_cls.from_config(config),
        keras.layers.deserialize(keras.layers.serialize(layer)),
    ):
        assert type(restored) is layer_cls, f"{name}: deserialized as {type(restored).__name__}"
        assert restored.get_config() == config, (
            f"{name}: config changed in the round trip:\n{restored.get_config()}\n!=\n{config}"
        )
        _call(restored, input_data, call_kwargs)  # builds it
        restored.set_weights(layer.get_weights())
        _assert_same_outputs(
            _to_numpy(_call(restored, input_data, call_kwargs)), outputs, f"{name} after from_config"
        )

    # 4. Symbolic call: shapes with a free batch dimension.
    positional, keyword = _symbolic_inputs(input_data, call_kwargs)
    symbolic_outputs = _as_tuple(layer_cls(**init_kwargs)(*positional, **keyword))
    expected_symbolic = tuple((None,) + s[1:] for s in expected_output_shapes)
    assert tuple(tuple(o.shape) for o in symbolic_outputs) == expected_symbolic, (
        f"{name}: symbolic output shapes {[o.shape for o in symbolic_outputs]}, "
        f"expected {expected_symbolic}"
    )

    # 5. Mixed precision: float32 variables, compute-dtype outputs.
    if run_mixed_precision_check:
        for policy in MIXED_PRECISION_POLICIES:
            compute_dtype = keras.DTypePolicy(policy).compute_dtype
            mixed = layer_cls(**init_kwargs, dtype=policy)
            mixed_outputs = _call(mixed, input_data, call_kwargs)
            for w in mixed.weights:
                assert w.dtype == "float32", f"{name} under {policy}: {w.path} is {w.dtype}"
            mixed_numpy = []
            for i, o in enumerate(mixed_outputs):
                if _is_floating(o.dtype):
                    assert keras.backend.standardize_dtype(o.dtype) == compute_dtype, (
                        f"{name} under {policy}: output {i} has dtype {o.dtype}, "
                        f"expected {compute_dtype}"
                    )
                    # numpy has no bfloat16 arithmetic everywhere: check in float32.
                    o = ops.convert_to_numpy(ops.cast(o, "float32"))
                    assert np.all(np.isfinite(o)), f"{name} under {policy}: output {i} not finite"
                else:
                    o = ops.convert_to_numpy(o)
                mixed_numpy.append(o)
            symbolic_mixed = _as_tuple(layer_cls(**init_kwargs, dtype=policy)(*positional, **keyword))
            for i, s in enumerate(symbolic_mixed):
                if _is_floating(s.dtype):
                    assert keras.backend.standardize_dtype(s.dtype) == compute_dtype, (
                        f"{name} under {policy}: symbolic output {i} has dtype {s.dtype}"
                    )
            if output_check is not None:
                output_check(tuple(mixed_numpy))

    # 6. One fit step of a tiny functional model.
    if run_training_check:
        trained = layer_cls(**init_kwargs)
        model = _functional_model(trained, input_data, call_kwargs)
        before = [ops.convert_to_numpy(w).copy() for w in trained.trainable_weights]
        rng = np.random.default_rng(0)
        targets = [rng.normal(size=o.shape).astype("float32") for o in outputs]
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss=["mse"] * len(targets))
        history = model.fit(
            _model_inputs(input_data, call_kwargs), targets, batch_size=len(input_data[0]),
            epochs=1, verbose=0,
        )
        loss = history.history["loss"][-1]
        assert np.isfinite(loss), f"{name}: fit loss is {loss}"
        for w, old in zip(trained.trainable_weights, before):
            assert not np.array_equal(ops.convert_to_numpy(w), old), (
                f"{name}: {w.path} did not change in one fit step"
            )

    # 7. .keras save / load round trip.
    if run_saving_check:
        model = _functional_model(layer, input_data, call_kwargs)
        model_inputs = _model_inputs(input_data, call_kwargs)
        expected = _to_numpy(model.predict(model_inputs, verbose=0))
        _assert_same_outputs(expected, outputs, f"{name} in a functional model")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.keras")
            model.save(path)
            loaded = keras.saving.load_model(path)  # no custom_objects: needs registration
        loaded_layers = [lay for lay in loaded.layers if isinstance(lay, layer_cls)]
        assert len(loaded_layers) == 1, f"{name}: the loaded model has {loaded.layers}"
        _assert_same_outputs(
            _to_numpy(loaded.predict(model_inputs, verbose=0)), expected, f"{name} after .keras load"
        )
