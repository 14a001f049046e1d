"""The hand-written transpose of the acoustic leapfrog step (the adjoint-state gradient's backward
step) against JAX's `vjp` of `Leapfrog.step`, float64: CPML with variable density, other boundary
conditions on some sides, space orders 4 and 8, and a grid too small for the edge-strip route (order 2
with CPML on every side: through `model_shots`' gradient in test_seismic.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde.seismic._adjoint_step import transposed_step

CPML, Neumann, Dirichlet, Periodic = sciax.pde.CPML, sciax.pde.Neumann, sciax.pde.Dirichlet, sciax.pde.Periodic
CASES = [
    (8, (20, 23), [(CPML(5), Neumann()), (Dirichlet(0.0), CPML(4))], "arithmetic"),
    (4, (24, 16), [(CPML(5), CPML(6)), Periodic()], "arithmetic"),
    (8, (12, 20), [(Neumann(), Dirichlet(0.0)), (CPML(4), CPML(4))], "arithmetic"),  # 12 < 2 * order: padded route
    (6, (22, 18), [(CPML(5), Neumann()), Periodic()], "harmonic"),  # the face values computed where read
    (8, (20, 22), [sciax.pde.ZeroPadding(), (sciax.pde.ZeroPadding(), CPML(4))], "harmonic"),  # zeros outside
]


@pytest.mark.parametrize("order, shape, bc, average", CASES)
def test_transposed_step_equals_vjp_of_the_leapfrog_step(order, shape, bc, average):
    rng = np.random.default_rng(order)
    grid = sciax.pde.Grid(shape, (10.0 * shape[0], 12.0 * shape[1]))
    model = sciax.pde.AcousticWave(grid, f0=20.0, bc=bc, order=order, density_average=average)
    params = {"c": jnp.asarray(2000 + 300 * rng.random(shape)), "rho": jnp.asarray(1 + rng.random(shape))}
    method = sciax.pde.Leapfrog(1e-3, checkpoint=None)
    zeros = jnp.zeros(shape)
    state = method.init(model, {"p": zeros, "v": zeros}, method.prepare(model, {"c": 2000.0}))  # the shapes only
    random = lambda tree: jax.tree_util.tree_map(lambda x: jnp.asarray(rng.standard_normal(x.shape)), tree)  # noqa: E731
    state, cotangent = random(state), random(state)

    @jax.jit
    def both(params, state, cotangent):
        coefficients = method.prepare(model, params)
        # The reference: reverse mode of the step itself (no source: the operator whose transpose is wanted).
        (expected,) = jax.vjp(lambda s: method.step(model, s, 0.0, coefficients), state)[1](cotangent)
        # The adjoint field's convention: `a = lambda_p`, `a_prev = -lambda_p_prev`; the new `a_prev` is `a`.
        a, memory = transposed_step(
            model, coefficients.operator, 1e-3, cotangent.p, -cotangent.p_prev, cotangent.memory
        )
        return expected, a, memory

    expected, a, memory = both(params, state, cotangent)
    np.testing.assert_array_equal(expected.p_prev, -cotangent.p)
    pairs = [(a, expected.p)] + list(
        zip(jax.tree_util.tree_leaves(memory), jax.tree_util.tree_leaves(expected.memory), strict=True)
    )
    assert len(pairs) == 1 + 2 * sum(layer is not None for layer in state.memory)
    for got, want in pairs:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(want))))
