"""`linear(x, kernel)`: a product over the last axis that XLA compiles inside a time loop's gradient."""

from keras import ops


def linear(x, kernel):
    """`(..., D) x (D, N) -> (..., N)`, or `(..., D) x (D,) -> (...)`, as one einsum.

    Keras' `ops.matmul` sends a rank > 2 tensor through TensorFlow's `tensordot`, whose
    transpose permutation is a computed tensor: in the gradient of a `while` loop it is
    carried across iterations, and XLA (`jit_compile`) rejects it as not compile-time constant.
    """
    if len(kernel.shape) == 1:
        return ops.einsum("...d,d->...", x, kernel)
    if len(x.shape) == 2:
        return ops.matmul(x, kernel)
    return ops.einsum("...d,dn->...n", x, kernel)
