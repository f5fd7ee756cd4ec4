"""Kernel gradients of a time loop taken after the loop, as one matrix product per kernel."""

import keras
from keras import ops

from zoo.layers.linear import KernelPair, linear


def add_decoder_kernels(model, kernels, extra_kernel):
    """`model.add_loop_kernels(kernels, extra_kernel)`, or `(kernels)` alone for a hook that takes no `extra_kernel`
    (a subclass written before it existed: its cell's extra rows then come from the cell's own property)."""
    import inspect

    if "extra_kernel" in inspect.signature(model.add_loop_kernels).parameters:
        return model.add_loop_kernels(kernels, extra_kernel)
    return model.add_loop_kernels(kernels)


def add_step_input_kernels(model, kernels):
    """Adds to a decoding loop's `kernels` what the first cell's gates read at a step: for an LSTM in a model
    whose `recur` multiplies `E y_{t-1}` itself (`fuses_step_gates`), "step_gates" (`LSTMCell.stacked_kernel`,
    read by `LSTMCell.fused_step`); else the input projection's "input_kernel" and "input_bias"."""
    cell = model.decoder_input_cell
    if model.fuses_step_gates and cell.additive:
        kernels.add("step_gates", cell.stacked_kernel())
    else:
        kernels.add("input_kernel", cell.input_kernel)
        kernels.add("input_bias", cell.bias)


def defers(training):
    """Whether a time loop run with Keras' `training` flag takes its kernels' gradients after the loop.

    In training (True, or a flag only known when the graph runs) yes; in inference (None or
    False: evaluation, decoding, an export's signatures) no, where the deferral's custom
    gradients and recorded step inputs would only cost loading time and ops. A gradient taken
    there anyway is still exact: it is taken inside the loop.
    """
    try:
        return bool(training)  # None: inference, as False
    except (TypeError, ValueError):  # a symbolic tensor
        return True


def _integer_of_width(size):
    """The integer dtype of `size` bytes, which `LoopKernels.recorded` bitcasts a step's inputs to."""
    import tensorflow as tf

    return {1: tf.int8, 2: tf.int16, 4: tf.int32, 8: tf.int64}[size]


class LoopKernels:
    """The loop-invariant kernels a time loop multiplies by, cast once, with their gradients taken outside it.

    Differentiating a `while` loop whose step computes `z_t = g_t + x_t W` gives, at every
    step, a small `x_t^T dz_t` product, its cast to the variable's dtype under mixed
    precision and a running sum of a kernel-sized tensor; on a CPU these per-step ops cost
    more than the step's own arithmetic. Here the loop reads `W` cast once and cut from the
    gradient (`add`), the step's inputs `x_t` are recorded (`use`) and stacked by the loop (`set_inputs`), and
    `dW = sum_t x_t^T dz_t` is one matrix product of `X (T, B, D)` and `dZ (T, B, G)` after
    the loop. `dZ` is the gradient of the tensor `G (T, B, G)` that the loop reads one step
    at a time and adds to `z_t` (`route`): `dz_t = dg_t`. So it only applies where the
    kernel's product is added unchanged to such a tensor (an LSTM's gates; not a GRU's
    candidate, whose recurrent part is multiplied by the reset gate).

    On a backend other than TensorFlow the kernels are cast once and differentiated as usual.

    Example (one LSTM over time):

        kernels = LoopKernels("bfloat16")
        u = kernels.add("recurrent", cell.recurrent_kernel)
        gates = kernels.route(gates, ["recurrent"])  # (T, B, 4U): the loop's input
        # in the step: output, state = cell.step(gates_t, state, kernels.use("recurrent", state[0]))
        # (u, recording h_{t-1}); the step also outputs kernels.recorded(), which the loop stacks:
        kernels.set_inputs(stacked)  # {"recurrent": (T, B, U)}, after the loop
    """

    enabled = True  # False: every kernel is cast once and differentiated inside the loop (a reference)

    def __init__(self, dtype, deferred=True):
        """`dtype`: the compute dtype; `deferred=False`: only cast once (inference: see `defers`)."""
        self.dtype = dtype
        self.deferred = deferred and self.enabled and keras.backend.backend() == "tensorflow"
        self._sources = {}  # name -> the kernel as the model holds it (what the gradient is for)
        self._loop = {}  # name -> the kernel the loop reads
        self._inputs = {}  # name -> stacked step inputs (T, B, D)
        self._step = {}  # name -> this step's inputs, until `recorded`
        self._probed = []  # the kernels added with `probe=True`
        self._probes = {}  # name -> this step's zeros, from `start_step`
        self._pairs = {}  # name -> KernelPair: a product's input gradient by the transposed kernel
        self._per_example = {}  # name -> "left" or "right", for the per-example tensors
        self._recorded_dtypes = {}  # name -> the dtype of the step inputs `recorded` hands the loop as integers

    @property
    def names(self):
        return list(self._loop)

    def add(self, name, kernel, probe=False, per_example=None):
        """`kernel` `(D, G)` as the loop reads it: in the compute dtype, and without a gradient of its own.

        `probe`: the step's product is not added to a routed tensor (see `probes`).
        `per_example`: `kernel` is a `(B, S, G)` tensor of each example that a step multiplies
        (recorded by `probed`) as `X_t (B, Q, S) @ kernel` ("left", an attention's values;
        gradient `einsum("tbqs,tbqg->bsg", X, dZ)` after the loop) or as `X_t (B, Q, G) @
        kernel^T` ("right", the keys of a dot-product score; `einsum("tbqs,tbqg->bsg", dZ, X)`).
        """
        kernel = ops.convert_to_tensor(kernel)
        if per_example not in (None, "left", "right"):
            raise ValueError(f"LoopKernels: per_example must be None, 'left' or 'right', received {per_example!r}.")
        if per_example:
            self._per_example[name] = per_example
        self._sources[name] = kernel
        cast = ops.cast(kernel, self.dtype)
        self._loop[name] = ops.stop_gradient(cast) if self.deferred else cast
        if probe:
            self._probed.append(name)
        # float32 only: there oneDNN's `transpose_b` product is the slow one (`KernelPair`); in bfloat16
        # both products take the same time and the transposes would only add copies to the step.
        if self.deferred and per_example is None and len(cast.shape) == 2 and self.dtype == "float32":
            self._pairs[name] = KernelPair(self._loop[name], ops.transpose(self._loop[name]))
        return self._loop[name]

    def probes(self, leading_shape):
        """`{name: zeros (*leading_shape, G)}`, routed to the kernels added with `probe=True`.

        The loop reads them one step at a time (`start_step`) and `product` adds them to
        the kernel's product, so that their gradient is the product's. Empty when the
        gradients are not deferred.
        """
        if not self.deferred:
            return {}
        def size(name):  # of the product's last axis
            kernel = self._loop[name]
            return ops.shape(kernel)[1] if self._per_example.get(name) == "right" else kernel.shape[-1]

        return {name: self.route(ops.zeros((*leading_shape, size(name)), self.dtype), [name]) for name in self._probed}

    def start_step(self, probes):
        """In a step, first: this step's slices of `probes`."""
        self._probes = probes

    def product(self, name, inputs):
        """In a step: `inputs (..., D) @ kernel` of the kernel `name` added with `probe=True`, recording `inputs`."""
        return self.probed(name, linear(inputs, self._pairs.get(name, self._loop[name])), inputs)

    def probed(self, name, product, inputs):
        """In a step: `product`, which the caller computed from `inputs` and the loop's `name`
        (added with `probe=True`), plus this step's probe; records `inputs`."""
        self.use(name, inputs)
        return product + self._probes[name] if name in self._probes else product

    def use(self, name, inputs):
        """In a step: the loop's kernel `name` (None if it was not added), recording the step's `inputs`
        when its gradient is deferred (otherwise nothing needs them); then, for a 2-D float32 kernel, a
        `KernelPair` that `linear(inputs, kernel)` multiplies by."""
        if name not in self._loop:
            return None
        if self.deferred:
            self._step[name] = inputs
            if inputs is not None and name in self._pairs:  # a product of the step's inputs (see `KernelPair`)
                return self._pairs[name]
        return self._loop[name]

    def recorded(self):
        """The inputs `use` recorded in this step, `{name: (B, ..., D)}`, for the loop to stack; then forgets them.

        They leave the loop as integers of their width (a bitcast, no copy; `set_inputs` casts them
        back). Nothing differentiates them (the kernels' gradients read them as constants), and a
        floating-point stack would be a differentiable output of the `while` loop: its gradient would
        start from a zero-filled `(T, B, ..., D)` list, and every backward step would add a zero row
        from it to the real gradient of the step's input.
        """
        step, self._step = self._step, {}  # empty unless deferred (TensorFlow only)
        return {name: self._untracked(name, inputs) for name, inputs in step.items()}

    def _untracked(self, name, inputs):
        """A step's `inputs` of the kernel `name` as integers of their width (None stays None)."""
        if inputs is None:
            return None
        import tensorflow as tf

        self._recorded_dtypes[name] = inputs.dtype
        return tf.bitcast(inputs, _integer_of_width(inputs.dtype.size))

    def route(self, gates, names):
        """`gates` `(T, B, G)` unchanged; its gradient `dZ` also gives each named kernel `X^T dZ`."""
        if not self.deferred or not names:
            return gates
        import tensorflow as tf

        names = list(names)

        @tf.custom_gradient
        def attach(gates, *sources):
            def gradient(upstream):
                grads = []
                for name, source in zip(names, sources):
                    if name not in self._inputs:
                        raise RuntimeError(f"LoopKernels: no step inputs were given for the kernel {name!r}.")
                    inputs = tf.cast(self._inputs[name], upstream.dtype)
                    if name in self._per_example:  # (T, B, Q, S) and (T, B, Q, G) -> (B, S, G)
                        left = self._per_example[name] == "left"
                        product = tf.einsum("tbqs,tbqg->bsg", *((inputs, upstream) if left else (upstream, inputs)))
                    else:  # (T * B, D)^T (T * B, G)
                        flat = tf.reshape(upstream, (-1, upstream.shape[-1]))
                        product = tf.matmul(tf.reshape(inputs, (-1, inputs.shape[-1])), flat, transpose_a=True)
                    grads.append(tf.cast(product, source.dtype))
                return (upstream, *grads)

            return tf.identity(gates), gradient

        return attach(gates, *(self._sources[name] for name in names))

    def set_inputs(self, stacked):
        """`{name: (T, B, ..., D)}`: the steps' `recorded()` inputs of each kernel, stacked by the loop.

        Their leading axes must be those of the routed tensor's, in the same order.
        """
        for name, inputs in stacked.items():
            if name in self._recorded_dtypes:  # integers from `recorded`
                import tensorflow as tf

                inputs = tf.bitcast(inputs, self._recorded_dtypes[name])
            self._inputs[name] = inputs
