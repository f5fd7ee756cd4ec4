"""LSTM and GRU cells whose input projection can be computed outside the time loop.

Teacher forcing knows every decoder input in advance, so `project_inputs` runs
once over the whole `(B, T, E)` sequence as one large matrix product and only the
recurrent part runs inside the loop; decoding calls the same two functions on
one step. Inputs that are only known inside the loop (input feeding, the
attention context) go through `project_extra`.
"""

import keras
from keras import ops

from zoo.constants import RNN_CELLS
from zoo.layers.linear import linear


class _GatedCell(keras.layers.Layer):
    """Shared weights of the gated cells: `kernel (input_dim, G*U)`, `recurrent_kernel (U, G*U)`, `bias`.

    The first `projected_dim` rows of `kernel` belong to the inputs known before
    the loop (`project_inputs`), the remaining rows to the extra inputs computed
    inside it (`project_extra`).
    """

    num_gates = None
    num_states = None  # tensors in the state tuple
    additive = False  # the gates are the projections plus `h recurrent_kernel`, unchanged

    def __init__(self, units, projected_dim, extra_dim=0, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        self.projected_dim = int(projected_dim)
        self.extra_dim = int(extra_dim)

    def build(self, input_shape=None):
        gates = self.num_gates * self.units
        self.kernel = self.add_weight(
            name="kernel", shape=(self.projected_dim + self.extra_dim, gates), initializer="glorot_uniform"
        )
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=(self.units, gates), initializer="orthogonal"
        )
        self.bias = self.add_weight(name="bias", shape=(gates,), initializer=self._bias_initializer())
        self.built = True

    def _bias_initializer(self):
        return "zeros"

    def call(self, gates, state):
        # Models call `step` directly: `__call__` would cast the float32 LSTM cell
        # state to the compute dtype under mixed precision.
        return self.step(gates, state)

    def project_inputs(self, inputs, kernel=None, bias=None):
        """`(..., projected_dim) -> (..., G*U)`: the loop-invariant part of the gates, bias included.

        `kernel`, `bias`: `input_kernel` and `bias` already in the compute dtype (a decoding
        loop casts them once, `LoopKernels`), or None.
        """
        if not self.built:
            self.build()
        kernel = ops.cast(self.input_kernel, self.compute_dtype) if kernel is None else kernel
        bias = ops.cast(self.bias, self.compute_dtype) if bias is None else bias
        return linear(inputs, kernel) + bias

    @property
    def input_kernel(self):
        """`(projected_dim, G*U)`: the rows of `kernel` for the inputs known before the loop.

        The whole kernel when there are no extra inputs: a slice would cost its gradient a
        kernel-sized copy at every training step."""
        return self.kernel if not self.extra_dim else self.kernel[: self.projected_dim]

    def kernel_parts(self):
        """`(input_kernel, extra_kernel)` from one split of `kernel` (`extra_kernel` None without extra inputs).

        For a training step that reads both: the gradients of two slices would each be a
        kernel-sized tensor of zeros around its part, and their sum a third; a split's is one
        concatenation of the two parts."""
        if not self.built:
            self.build()
        if not self.extra_dim:
            return self.kernel, None
        input_kernel, extra_kernel = ops.split(ops.convert_to_tensor(self.kernel), [self.projected_dim], axis=0)
        return input_kernel, extra_kernel

    @property
    def extra_kernel(self):
        """`(extra_dim, G*U)`: the rows of `kernel` for the inputs known only in the loop."""
        return self.kernel[self.projected_dim :]

    def project_extra(self, extra, kernel=None):
        """`(..., extra_dim) -> (..., G*U)`: the part of the gates from inputs known only in the loop.

        `kernel`: `extra_kernel` already in the compute dtype (`LoopKernels`), or None.
        """
        kernel = ops.cast(self.extra_kernel, self.compute_dtype) if kernel is None else kernel
        return linear(extra, kernel)

    def _recurrent(self, recurrent_kernel):
        if recurrent_kernel is None:
            return ops.cast(self.recurrent_kernel, self.compute_dtype)
        return recurrent_kernel

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "projected_dim": self.projected_dim, "extra_dim": self.extra_dim})
        return config


@keras.saving.register_keras_serializable(package="zoo")
class LSTMCell(_GatedCell):
    """LSTM (Hochreiter and Schmidhuber, 1997) with gates ordered i, f, c, o as in Keras.

    State: `(h, c)`, each `(..., U)`, `c` always float32. The forget gate bias starts at 1
    (Jozefowicz et al., 2015).
    """

    num_gates = 4
    num_states = 2  # (h, c)
    additive = True  # the gates are the inputs' projections plus h W_rec (`LoopKernels` applies)

    def _bias_initializer(self):
        units = self.units

        def initializer(shape, dtype=None):
            return ops.concatenate(
                [ops.zeros((units,)), ops.ones((units,)), ops.zeros((2 * units,))]
            )

        return initializer

    def initial_state(self, h):
        return (h, ops.zeros_like(h, dtype="float32"))

    def step(self, gates, state, recurrent_kernel=None):
        """`gates (..., 4U)` from the projections; returns `(output, new_state)`.

        The gate nonlinearities and the cell state `c` stay in float32 under mixed
        precision: only the matrix products run in the compute dtype. `recurrent_kernel`:
        the kernel already in the compute dtype (`LoopKernels`), or None.
        """
        h, c = state
        return self.activate(ops.cast(gates + linear(h, self._recurrent(recurrent_kernel)), "float32"), c)

    def stacked_kernel(self):
        """`(projected_dim + extra_dim + U, 4U)`: `kernel` (input and extra rows) above `recurrent_kernel`."""
        return ops.concatenate([self.kernel, self.recurrent_kernel], axis=0)

    def fused_step(self, parts, c, stacked_kernel):
        """A decoding step's `(output, new_state)` from `parts = [x_t, extra_t, h_{t-1}]` (the rows' order of
        `stacked_kernel()`, which a decoding loop casts once) and the cell state `c`: all the gates in one
        product of their concatenation, the bias added in float32, where `step` adds three products."""
        z = ops.cast(linear(ops.concatenate(parts, axis=-1), stacked_kernel), "float32")
        return self.activate(z + ops.cast(self.bias, "float32"), c)

    def activate(self, z, c):
        """`(output, new_state)` from the float32 sums `z (..., 4U)` of every part of the gates (the
        recurrent one and the bias included) and the previous cell state `c`."""
        i, f, g, o = ops.split(z, 4, axis=-1)
        c = ops.sigmoid(f) * ops.cast(c, "float32") + ops.sigmoid(i) * ops.tanh(g)
        h = ops.cast(ops.sigmoid(o) * ops.tanh(c), self.compute_dtype)
        return h, (h, c)


@keras.saving.register_keras_serializable(package="zoo")
class GRUCell(_GatedCell):
    """GRU (Cho et al., 2014) with the reset gate applied after the recurrent matmul.

    State: `(h,)`, `(..., U)`. Gates ordered z, r, n as in Keras.
    """

    num_gates = 3
    num_states = 1  # (h,)

    def initial_state(self, h):
        return (h,)

    def step(self, gates, state, recurrent_kernel=None):
        """`gates (..., 3U)` from the projections; returns `(output, new_state)`."""
        (h,) = state
        recurrent = linear(h, self._recurrent(recurrent_kernel))
        x_z, x_r, x_n = ops.split(gates, 3, axis=-1)
        h_z, h_r, h_n = ops.split(recurrent, 3, axis=-1)
        z = ops.sigmoid(x_z + h_z)
        r = ops.sigmoid(x_r + h_r)
        n = ops.tanh(x_n + r * h_n)
        h = z * h + (1.0 - z) * n
        return h, (h,)


CELLS = dict(zip(RNN_CELLS, (LSTMCell, GRUCell), strict=True))  # a name without a class fails at import


def make_cell(kind, units, projected_dim, extra_dim=0, name=None, dtype=None):
    if kind not in CELLS:
        raise ValueError(f"Unknown recurrent cell {kind!r}; expected one of {sorted(CELLS)}.")
    return CELLS[kind](units, projected_dim, extra_dim, name=name, dtype=dtype)
