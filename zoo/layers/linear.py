"""`linear(x, kernel)`: a product over the last axis that XLA compiles inside a time loop's gradient."""

from keras import ops


def linear(x, kernel):
    """`(..., D) x (D, N) -> (..., N)`, or `(..., D) x (D,) -> (...)`, as one 2-D matmul.

    Keras' `ops.matmul` sends a rank > 2 tensor through TensorFlow's `tensordot`, whose
    transpose permutation is a computed tensor: in the gradient of a `while` loop it is
    carried across iterations, and XLA (`jit_compile`) rejects it as not compile-time
    constant. Folding the leading axes into one and back keeps one plain matmul, which is
    also the fast kernel on CPUs (an einsum with an ellipsis is not).
    """
    vector = len(kernel.shape) == 1
    if vector:
        kernel = ops.expand_dims(kernel, -1)
    if len(x.shape) == 2:
        out = ops.matmul(x, kernel)
    else:
        out = ops.matmul(ops.reshape(x, (-1, x.shape[-1])), kernel)
        columns = kernel.shape[-1] if kernel.shape[-1] is not None else ops.shape(kernel)[-1]  # e.g. a shortlist's M
        inner = tuple(x.shape[1:-1])
        # Only the leading axis unknown (a time loop's (B, K, D)): no shape ops, which would sit
        # between the product and the next step's at every step.
        leading = (-1, *inner) if None not in inner else ops.shape(x)[:-1]
        out = ops.reshape(out, (*leading, columns))
    return ops.squeeze(out, -1) if vector else out
