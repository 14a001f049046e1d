"""Gradients of a simulation by forward sensitivities, exposed to reverse mode.

NUTS and SVI ask for `jax.grad` of the log density. Reverse mode through an
adaptive ODE solve stores (or recomputes) the forward pass and runs a second,
backward loop; with a handful of parameters it is cheaper to carry the
sensitivities `dy/dθ` along the forward solve (one `jax.jacfwd`, i.e. a
`jax.vmap` over `jax.jvp` directions sharing one step-size sequence) and hand
the Jacobian to reverse mode through a `jax.custom_vjp`. This is the classic
forward sensitivity analysis of ODE parameter estimation (e.g. Hindmarsh et al.,
"SUNDIALS", ACM TOMS 31 (2005) 363, §3.2), not an approximation: the gradient is
the derivative of the discretised solution, as reverse mode's would be.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, PyTree

#: Up to this many scalar inputs (sampled parameters and initial state), "auto" picks forward sensitivities.
FORWARD_MAX_INPUTS = 32


def forward_sensitivity(fn: Callable[[PyTree], tuple[Array, Array]], inputs: PyTree) -> tuple[Array, Array]:
    """`fn(inputs) -> (prediction, success)` with reverse-mode gradients computed by forward mode.

    Floating-point array leaves of `inputs` are differentiated; other leaves
    (Python numbers, callables) pass through as constants. `success` is a
    boolean and carries no gradient.
    """
    diff, static = eqx.partition(inputs, eqx.is_inexact_array)

    def primal(d):
        prediction, success = fn(eqx.combine(d, static))
        return prediction, success.astype(prediction.dtype)

    # Arrays `fn` closes over (the model's, which are tracers when this runs inside
    # a jit) become explicit inputs: a custom_vjp may not close over tracers.
    converted, consts = jax.closure_convert(primal, diff)

    @jax.custom_vjp
    def run(d, consts):
        return converted(d, *consts)

    def run_fwd(d, consts):
        def with_aux(x):
            prediction, success = converted(x, *consts)
            return prediction, (prediction, success)

        # One solve carries every sensitivity direction; the primal rides along as aux.
        jacobian, (prediction, success) = jax.jacfwd(with_aux, has_aux=True)(d)
        return (prediction, success), (jacobian, consts)

    def run_bwd(residuals, cotangents):
        jacobian, consts = residuals
        ct_prediction, _ = cotangents
        axes = tuple(range(ct_prediction.ndim))

        def contract(jac_leaf):
            return jnp.tensordot(ct_prediction, jac_leaf, axes=(axes, axes))

        # No gradient flows to the closed-over arrays (the model's own constants).
        return jax.tree_util.tree_map(contract, jacobian), jax.tree_util.tree_map(jnp.zeros_like, consts)

    run.defvjp(run_fwd, run_bwd)
    prediction, success = run(diff, consts)
    return prediction, success > 0.5


def count_inputs(shapes: list[tuple[int, ...]]) -> int:
    """Number of scalars in arrays of the given shapes."""
    return sum(math.prod(shape) for shape in shapes)


__all__ = ["forward_sensitivity", "count_inputs", "FORWARD_MAX_INPUTS"]
