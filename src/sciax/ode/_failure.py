"""Turn a diffrax result code into `success` and into errors that suggest a fix."""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp

_MESSAGES = (
    "",
    "sciax.simulate: the solver reached max_steps before the last output time. Raise "
    "max_steps=, or, if the problem is stiff (many rejected or tiny steps), use a stiff "
    "method such as sciax.ode.Kvaerno5(). If the state blew up, check the model and params.",
    "sciax.simulate: the step size collapsed (an implicit stage's nonlinear solve failed or "
    "the step fell below its minimum). The problem may be stiff for this method or ill-posed "
    "at this state: try sciax.ode.Kvaerno5(), tighter rtol/atol, or check the model.",
    "sciax.simulate: the state became NaN or inf. The solution blew up or the vector field "
    "returned non-finite values: check the model and params, use a smaller dt0 for a "
    "fixed-step method, or an adaptive/stiff method such as sciax.ode.Kvaerno5().",
    "sciax.simulate: a linear or nonlinear solve inside an implicit step failed "
    "(singular or non-finite Jacobian). Check the model's Jacobian near the failure.",
)

_OK, _MAX_STEPS, _STEP_COLLAPSE, _NONFINITE, _LINEAR = range(5)


def failure_code(result: diffrax.RESULTS, y_final) -> jax.Array:
    """0 when the solve succeeded (or stopped at an event), otherwise an index into `_MESSAGES`."""
    R = diffrax.RESULTS
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree_util.tree_leaves(y_final)]))
    ok = (result == R.successful) | (result == R.event_occurred)
    collapse = (
        (result == R.dt_min_reached) | (result == R.nonlinear_divergence) | (result == R.nonlinear_max_steps_reached)
    )
    linear = (result == R.singular) | (result == R.breakdown) | (result == R.nonfinite_input)
    return jnp.select(
        [ok & finite, result == R.max_steps_reached, collapse, ok | (result == R.nonfinite), linear],
        [_OK, _MAX_STEPS, _STEP_COLLAPSE, _NONFINITE, _LINEAR],
        default=_STEP_COLLAPSE,
    )


# A nested jit: the error check's host callback then lowers as its own small
# computation, which measurably cuts the compile time of the enclosing solve.
@eqx.filter_jit
def raise_on_failure(x, code: jax.Array):
    """`equinox.branched_error_if` with a message per failure kind (any member, under vmap)."""
    return eqx.branched_error_if(x, code != _OK, code, _MESSAGES)
