"""Unrolled explicit Runge–Kutta steps against diffrax's own stage loop (same tableau).

The reference is diffrax's `Tsit5`/`Dopri5` (an independent implementation of the
same pairs): step sequences must be identical and solutions agree to round-off.
Order and accuracy against exact and scipy solutions: test_convergence.py and
test_scipy_reference.py run both variants.
"""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.ode._unrolled_rk import UNROLL_MAX_STATE, UnrolledDopri5, UnrolledTsit5

LV = sciax.ode.lotka_volterra()
LV_P = {"alpha": 0.55, "beta": 0.028, "gamma": 0.80, "delta": 0.024}
Y0 = jnp.array([33.0, 6.0])
TS = jnp.linspace(0.0, 20.0, 21)
UNROLLED = sciax.ode.Tsit5(unroll=True)
PAIRS = [("Tsit5", UnrolledTsit5, diffrax.Tsit5), ("Dopri5", UnrolledDopri5, diffrax.Dopri5)]


def _solve(name, unroll, **kw):
    method = getattr(sciax.ode, name)(unroll=unroll)
    return sciax.simulate(LV, Y0, TS, LV_P, method=method, rtol=1e-8, atol=1e-8, **kw)


@pytest.mark.parametrize("name", ["Tsit5", "Dopri5"])
def test_same_steps_and_solution_as_diffrax_stage_loop(name):
    unrolled, looped = _solve(name, True, dense=True), _solve(name, False, dense=True)
    assert int(unrolled.stats["num_steps"]) == int(looped.stats["num_steps"])
    assert int(unrolled.stats["num_rejected_steps"]) == int(looped.stats["num_rejected_steps"])
    np.testing.assert_allclose(unrolled.ys, looped.ys, rtol=1e-12)
    t = jnp.array([0.37, 7.9, 19.5])  # dense output between steps: diffrax's interpolation on our stages
    np.testing.assert_allclose(jax.vmap(unrolled.evaluate)(t), jax.vmap(looped.evaluate)(t), rtol=1e-12)


def test_unroll_choice():
    assert isinstance(sciax.ode.Tsit5().solver_for(jnp.zeros(3), 1e-6, 1e-6, True), diffrax.Tsit5)  # default: loop
    automatic = sciax.ode.Tsit5(unroll=None)
    assert isinstance(automatic.solver_for(jnp.zeros(3), 1e-6, 1e-6, True), UnrolledTsit5)
    big = jnp.zeros(UNROLL_MAX_STATE + 1)
    assert isinstance(automatic.solver_for(big, 1e-6, 1e-6, True), diffrax.Tsit5)
    assert isinstance(sciax.ode.Dopri5(unroll=True).solver_for(big, 1e-6, 1e-6, True), UnrolledDopri5)
    assert isinstance(sciax.ode.Dopri5(unroll=False).solver_for(jnp.zeros(2), 1e-6, 1e-6, True), diffrax.Dopri5)


def test_pytree_state_matches_flat_state():
    def rhs(t, y, p):
        prey, predator = y["prey"], y["predator"]
        return {
            "prey": (p["alpha"] - p["beta"] * predator) * prey,
            "predator": (p["delta"] * prey - p["gamma"]) * predator,
        }

    tree = sciax.simulate(
        sciax.ode.ODE(rhs),
        {"prey": Y0[0], "predator": Y0[1]},
        TS,
        LV_P,
        method=sciax.ode.Tsit5(unroll=True),
        rtol=1e-8,
        atol=1e-8,
    )
    flat = _solve("Tsit5", True)
    np.testing.assert_allclose(jnp.stack([tree.ys["prey"], tree.ys["predator"]], -1), flat.ys, rtol=1e-12)


@pytest.mark.parametrize("name, unrolled_cls, diffrax_cls", PAIRS, ids=[p[0] for p in PAIRS])
def test_jump_restarts_fsal_like_diffrax(name, unrolled_cls, diffrax_cls):
    """With jump_ts the controller reports jumps: the stored last stage must be re-evaluated there."""

    def rhs(t, y, args):
        return jnp.where(t < 1.0, -y, 2.0 * y)  # discontinuous in t at 1

    def solve(solver):
        return diffrax.diffeqsolve(
            diffrax.ODETerm(rhs),
            solver,
            0.0,
            2.0,
            0.1,
            jnp.array([1.0, 2.0]),
            stepsize_controller=diffrax.PIDController(rtol=1e-9, atol=1e-9, jump_ts=jnp.array([1.0])),
            saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 2.0, 9)),
        )

    ours, theirs = solve(unrolled_cls()), solve(diffrax_cls())
    assert int(ours.stats["num_steps"]) == int(theirs.stats["num_steps"])
    np.testing.assert_allclose(ours.ys, theirs.ys, rtol=1e-12)
    exact = jnp.array([1.0, 2.0]) * jnp.exp(-1.0) * jnp.exp(2.0 * (2.0 - 1.0))
    np.testing.assert_allclose(ours.ys[-1], exact, rtol=1e-7)


def test_jacfwd_and_grad_match_central_differences():
    def final(x, adjoint):
        p = dict(zip(("alpha", "beta", "gamma", "delta"), x[:4]))
        sol = sciax.simulate(LV, x[4:], TS, p, method=UNROLLED, rtol=1e-10, atol=1e-10, adjoint=adjoint)
        return sol.ys[-1]

    x = jnp.array([0.55, 0.028, 0.80, 0.024, 33.0, 6.0])
    # Every step checkpointed: reverse mode recomputes nothing, so it differentiates exactly the
    # forward solve (see test_transforms.test_grad_under_vmap for what the default may do).
    every_step = sciax.ode.RecursiveCheckpointAdjoint(checkpoints=4096)
    # Each as one compiled program: the two Jacobians, and the solve for the twelve differences.
    forward = jax.jit(jax.jacfwd(lambda x: final(x, sciax.ode.ForwardMode())))(x)
    reverse = jax.jit(jax.jacrev(lambda x: final(x, every_step)))(x)
    value = jax.jit(lambda x: final(x, None))
    eps = 1e-6 * jnp.maximum(jnp.abs(x), 1.0)
    columns = [(value(x.at[i].add(eps[i])) - value(x.at[i].add(-eps[i]))) / (2 * eps[i]) for i in range(6)]
    central = jnp.stack(columns, axis=-1)
    np.testing.assert_allclose(forward, central, rtol=1e-4, atol=1e-6 * float(jnp.max(jnp.abs(central))))
    np.testing.assert_allclose(reverse, forward, rtol=1e-9, atol=1e-9 * float(jnp.max(jnp.abs(forward))))


def test_vmap_over_initial_states_equals_loop():
    y0s = jnp.array([[33.0, 6.0], [20.0, 10.0], [50.0, 3.0]])
    batched = jax.vmap(lambda y0: sciax.simulate(LV, y0, TS, LV_P, method=UNROLLED).ys)(y0s)
    for i in range(3):
        np.testing.assert_allclose(batched[i], sciax.simulate(LV, y0s[i], TS, LV_P, method=UNROLLED).ys, rtol=1e-12)


def test_grad_under_vmap_equals_single_solve():
    """Reverse mode through diffrax's checkpointed loop under vmap: the FSAL state must not start outside it."""

    def loss(y0, p):
        adjoint = sciax.ode.RecursiveCheckpointAdjoint(checkpoints=4096)  # no recomputed steps
        ys = sciax.simulate(LV, y0, TS, p, method=UNROLLED, rtol=1e-10, atol=1e-10, adjoint=adjoint).ys
        return jnp.sum(ys[-1] ** 2)

    scale = jnp.linspace(0.9, 1.1, 3)
    y0s, ps = Y0 * scale[:, None], {k: v * scale[::-1] for k, v in LV_P.items()}
    batched = jax.vmap(jax.grad(loss, argnums=1))(y0s, ps)
    single = jax.grad(loss, argnums=1)(y0s[1], {k: v[1] for k, v in ps.items()})
    for k in LV_P:
        np.testing.assert_allclose(float(batched[k][1]), float(single[k]), rtol=1e-10)


def test_bad_unroll_value():
    with pytest.raises(TypeError, match=r"Tsit5: unroll must be True, False or None.*'yes'"):
        sciax.ode.Tsit5(unroll="yes")
    with pytest.raises(TypeError, match=r"Dopri5: unroll must be"):
        sciax.ode.Dopri5(unroll=1)
