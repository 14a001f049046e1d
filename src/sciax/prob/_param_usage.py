"""Which entries of a params dict a model's right-hand side actually reads.

Used to reject priors whose names match no parameter (a typo such as
`"alhpa"` would otherwise add a free parameter the likelihood never sees, and
the sampler would happily report its prior as the posterior).
"""

from __future__ import annotations

from collections.abc import Mapping

import jax
import jax.numpy as jnp

from .._model import AbstractModel


def used_parameters(model: AbstractModel, y0, params: Mapping) -> set[str]:
    """Names `k` of `params` such that `model.rhs(t, y0, params)` depends on `params[k]`.

    Traces the right-hand side once (no evaluation) and looks for each
    parameter's inputs among the operands of the traced program. A parameter
    read inside a branch of `lax.cond` counts as used.

    Raises `ValueError` naming the parameter when the right-hand side reads a
    key that `params` lacks.
    """
    names = list(params)
    flat = [jax.tree_util.tree_flatten(params[n]) for n in names]

    def rhs_of(*leaf_lists):
        rebuilt = {
            n: jax.tree_util.tree_unflatten(tree, leaves) for n, (_, tree), leaves in zip(names, flat, leaf_lists)
        }
        return model.rhs(jnp.zeros(()), y0, rebuilt)

    try:
        closed = jax.make_jaxpr(rhs_of)(*[leaves for leaves, _ in flat])
    except KeyError as err:
        missing = err.args[0] if err.args else "?"
        raise ValueError(
            f"the model's right-hand side reads params[{missing!r}], which has neither a prior "
            f"(priors=) nor a fixed value (params=); known names: {sorted(names)}"
        ) from err
    jaxpr = closed.jaxpr
    used_vars = {id(v) for eqn in jaxpr.eqns for v in eqn.invars}
    used_vars |= {id(v) for v in jaxpr.outvars}
    used, position = set(), 0
    for name, (leaves, _) in zip(names, flat):
        invars = jaxpr.invars[position : position + len(leaves)]
        position += len(leaves)
        if any(id(v) in used_vars for v in invars):
            used.add(name)
    return used
