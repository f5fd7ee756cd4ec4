"""`linear(x, kernel)`: a product over the last axis that XLA compiles inside a time loop's gradient."""

from keras import ops


def linear(x, kernel):
    """`(..., D) x (D, N) -> (..., N)`, or `(..., D) x (D,) -> (...)`, as one 2-D matmul.

    Keras' `ops.matmul` sends a rank > 2 tensor through TensorFlow's `tensordot`, whose
    transpose permutation is a computed tensor: in the gradient of a `while` loop it is
    carried across iterations, and XLA (`jit_compile`) rejects it as not compile-time
    constant. Folding the leading axes into one and back keeps one plain matmul, which is
    also the fast kernel on CPUs (an einsum with an ellipsis is not).

    `kernel` may be a `KernelPair` (a time loop's kernel with its transpose): the same
    product, whose input gradient multiplies by the transpose.
    """
    vector = len(kernel.shape) == 1
    if vector:
        kernel = ops.expand_dims(kernel, -1)
    matmul = kernel.matmul if isinstance(kernel, KernelPair) else lambda rows: ops.matmul(rows, kernel)
    if len(x.shape) == 2:
        out = matmul(x)
    else:
        out = matmul(ops.reshape(x, (-1, x.shape[-1])))
        columns = kernel.shape[-1] if kernel.shape[-1] is not None else ops.shape(kernel)[-1]  # e.g. a shortlist's M
        inner = tuple(x.shape[1:-1])
        # Only the leading axis unknown (a time loop's (B, K, D)): no shape ops, which would sit
        # between the product and the next step's at every step. A -1 beside a 0 is ambiguous (an
        # empty batch), so a 0 needs the whole shape.
        if None not in x.shape[:-1]:
            leading = tuple(x.shape[:-1])
        elif None not in inner and 0 not in inner:
            leading = (-1, *inner)
        else:
            leading = ops.shape(x)[:-1]
        out = ops.reshape(out, (*leading, columns))
    return ops.squeeze(out, -1) if vector else out


class KernelPair:
    """A constant kernel `(D, N)` and its transpose `(N, D)`, both made once before a time loop (TensorFlow).

    `linear(x, pair)` is `x @ kernel` whose gradient is `dz @ transpose`, a plain product,
    where differentiating a matmul gives `dz @ kernel^T` (a `transpose_b` product). On a CPU,
    oneDNN's float32 `transpose_b` product at a time loop's shapes, `(64, 2048) x (512,
    2048)^T`, took about 1.5x the plain one's time on this project's 2-core machine (bfloat16
    the same either way), and a training step's backward loops do one per kernel and step. The kernel
    gets no gradient here: `LoopKernels` takes it after the loop.
    """

    def __init__(self, kernel, transpose):
        self.kernel, self.transpose = kernel, transpose
        self.shape, self.dtype = kernel.shape, kernel.dtype

    def matmul(self, x):
        """`x (M, D) @ kernel`, its gradient by the transpose."""
        import tensorflow as tf

        @tf.custom_gradient
        def product(x):
            return tf.matmul(x, self.kernel), lambda upstream: tf.matmul(upstream, self.transpose)

        return product(x)
