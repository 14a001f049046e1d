"""BDF (variable-order NDF): formula order on exact histories, agreement with scipy's BDF
(the same Shampine–Reichelt algorithm, an independent implementation), the IVP test set's
published HIRES solution, exact solutions of linear systems, sparse Jacobians, transforms."""

import functools

import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from diffrax import ForwardMode
from scipy.integrate import solve_ivp

import sciax
from sciax.ode import _bdf_core as core

from .test_rosenbrock import HIRES_REFERENCE

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _exact_table(order, h, lam, t):
    """Backward differences of y = exp(lam t) at spacing h ending at t (rows 0..order)."""
    samples = np.exp(lam * (t - h * np.arange(order + 1)))
    table = np.zeros((core.MAX_ORDER + 3, 1))
    diffs = samples.copy()
    for k in range(order + 1):
        table[k, 0] = diffs[0]
        diffs = diffs[:-1] - diffs[1:]
    return jnp.asarray(table)


@pytest.mark.parametrize("ndf", [True, False])
@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_formula_order_from_an_exact_history(order, ndf):
    # One corrector step of y' = lam y from exact past values: local error O(h^(q+1)).
    lam, t = -0.7, 0.3
    kappa = core.KAPPA if ndf else np.zeros_like(core.KAPPA)
    alpha = jnp.asarray((1 - kappa) * core.GAMMA)
    errors = []
    hs = [0.1 / 2**k for k in range(4)]
    for h in hs:
        table = _exact_table(order, h, lam, t)
        c = h / alpha[order]
        y_pred = core.predict(table, order)
        psi = core.psi(table, order, alpha)
        d = (c * lam * y_pred - psi) / (1 - c * lam)  # the corrector equation, solved exactly
        errors.append(abs(float((y_pred + d)[0]) - np.exp(lam * (t + h))))
    slopes = np.diff(np.log(errors)) / np.diff(np.log(hs))
    np.testing.assert_allclose(slopes[-1], order + 1, atol=0.15)


@pytest.mark.parametrize("order", [1, 3, 5])
def test_change_of_step_is_exact_for_polynomials(order):
    # The table of a degree-`order` polynomial at spacing h, rescaled by r, equals its table at spacing r h.
    poly = np.polynomial.Polynomial(np.arange(1.0, order + 2.0))
    h, r, t = 0.2, 0.37, 1.1

    def table(spacing):
        samples = poly(t - spacing * np.arange(order + 1))
        out = np.zeros((core.MAX_ORDER + 3, 1))
        for k in range(order + 1):
            out[k, 0] = samples[0]
            samples = samples[:-1] - samples[1:]
        return out

    got = core.change_step(jnp.asarray(table(h)), order, jnp.asarray(r))
    np.testing.assert_allclose(got[: order + 1], table(r * h)[: order + 1], rtol=1e-12, atol=1e-12)


def _accept_as_scipy(table, order, d):
    # scipy.integrate BDF's update of its difference table after an accepted step, on a copy.
    table = np.array(table)
    table[order + 2] = d - table[order + 1]
    table[order + 1] = d
    for i in reversed(range(order + 1)):
        table[i] += table[i + 1]
    return table


def test_accepted_step_updates_the_table_as_scipy_bdf_does():
    rng = np.random.default_rng(0)
    tables = rng.normal(size=(core.MAX_ORDER, core.MAX_ORDER + 3, 7))
    ds = rng.normal(size=(core.MAX_ORDER, 7))
    orders = np.arange(1, core.MAX_ORDER + 1)
    expected = np.stack([_accept_as_scipy(tables[i], q, ds[i]) for i, q in enumerate(orders)])
    accept = jax.jit(core.accept)  # one compilation serves every order (a traced integer)
    for i, q in enumerate(orders):
        got = accept(jnp.asarray(tables[i]), jnp.int32(q), jnp.asarray(ds[i]))
        np.testing.assert_allclose(np.asarray(got), expected[i], rtol=1e-14, atol=1e-14)
    # Batched, every member at its own order (the branches become a select).
    got = jax.jit(jax.vmap(core.accept))(jnp.asarray(tables), jnp.asarray(orders, jnp.int32), jnp.asarray(ds))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-14, atol=1e-14)


def _rober_rhs(t, y, k):
    return jnp.stack(
        [
            -k[0] * y[0] + k[2] * y[1] * y[2],
            k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
            k[1] * y[1] ** 2,
        ]
    )


ROBER = sciax.ode.ODE(_rober_rhs)
ROBER_K = jnp.array([0.04, 3e7, 1e4])
ROBER_TS = jnp.array([0.0, 1e-2, 1.0, 1e2, 1e4, 1e6])


@functools.cache
def _rober_bdf(lazy):
    method = sciax.ode.BDF(lazy_factorisation=lazy)
    return jax.jit(lambda y0, k: sciax.simulate(ROBER, y0, ROBER_TS, k, method=method, rtol=1e-6, atol=1e-10))


@pytest.mark.parametrize("lazy", [False, True])
def test_rober_agrees_with_scipy_bdf(lazy):
    sol = _rober_bdf(lazy)(jnp.array([1.0, 0.0, 0.0]), ROBER_K)
    k = np.asarray(ROBER_K)
    ref = solve_ivp(
        lambda t, y: np.asarray(_rober_rhs(t, y, k)),
        (0.0, float(ROBER_TS[-1])),
        np.array([1.0, 0.0, 0.0]),
        method="BDF",
        rtol=1e-6,
        atol=1e-10,
        t_eval=np.asarray(ROBER_TS),
    )
    # The same algorithm: equal up to round-off until a step decision sits within round-off of
    # its threshold, then within the local error (mixed test with the solves' atol).
    np.testing.assert_allclose(np.asarray(sol.ys), ref.y.T, rtol=1e-6, atol=1e-10)
    nlu = int(sol.stats["num_factorisations"])
    if lazy:  # CVODE's reuse rule: fewer factorisations than scipy's refactor-on-every-change
        assert nlu < 0.8 * ref.nlu, (nlu, ref.nlu)
    else:
        counts = (("num_rhs_evals", ref.nfev), ("num_jacobian_evals", ref.njev), ("num_factorisations", ref.nlu))
        for ours, theirs in counts:
            assert abs(int(sol.stats[ours]) - theirs) <= 0.15 * theirs, (ours, int(sol.stats[ours]), theirs)
    assert nlu < int(sol.stats["num_steps"]) // 3  # reuse


def test_hires_against_the_published_solution():
    model, y0, t1, p = sciax.ode.stiff_problem("hires")
    sol = sciax.simulate(model, y0, jnp.array([0.0, t1]), p, method=sciax.ode.BDF(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(sol.ys[-1]), HIRES_REFERENCE, rtol=1e-5)


LINEAR_A = np.array([[-1.0, 1.0, 0.0], [0.0, -20.0, 5.0], [0.0, 0.0, -1000.0]])


def _linear(t, y, p):
    return (jnp.asarray(LINEAR_A) * jnp.array([[p, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])) @ y


LINEAR = sciax.ode.ODE(_linear)
LINEAR_TS = jnp.linspace(0.0, 2.0, 5)


@functools.cache
def _linear_final():
    @jax.jit
    def final(y0, p):
        sol = sciax.simulate(LINEAR, y0, LINEAR_TS, p, method=sciax.ode.BDF(), rtol=1e-10, atol=1e-12)
        return sol.ys[-1]

    return final


def _exact_final(y0, p):
    a = LINEAR_A.copy()
    a[0, 0] *= p
    return scipy.linalg.expm(a * float(LINEAR_TS[-1])) @ y0


@pytest.mark.parametrize("rtol, tol", [(1e-5, 1e-3), (1e-10, 1e-8)])
def test_linear_system_against_the_matrix_exponential(rtol, tol):
    y0 = np.array([1.0, 2.0, 3.0])
    tolerance = jnp.asarray(rtol)  # an array, not a Python float: one compilation of the solve serves both tolerances
    sol = sciax.simulate(
        LINEAR, jnp.asarray(y0), LINEAR_TS, 1.0, method=sciax.ode.BDF(), rtol=tolerance, atol=tolerance
    )
    want = np.stack([scipy.linalg.expm(LINEAR_A * float(t)) @ y0 for t in LINEAR_TS])
    np.testing.assert_allclose(np.asarray(sol.ys), want, rtol=tol, atol=tol)  # mixed test, as the solver's


def test_vmap_over_initial_conditions_and_params():
    y0s = jnp.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    ps = jnp.array([1.0, 1.5])
    got = jax.vmap(_linear_final())(y0s, ps)
    for i in range(2):
        np.testing.assert_allclose(got[i], _exact_final(np.asarray(y0s[i]), float(ps[i])), rtol=1e-7, atol=1e-12)


def test_grad_and_jvp_against_the_exact_derivative():
    y0 = jnp.array([1.0, 2.0, 3.0])

    def loss(p):
        return jnp.sum(_linear_final()(y0, p) ** 2)

    def exact_loss(p):
        return float(np.sum(_exact_final(np.asarray(y0), p) ** 2))

    eps = 1e-5
    exact = (exact_loss(1.2 + eps) - exact_loss(1.2 - eps)) / (2 * eps)

    def forward_loss(p):
        method = sciax.ode.BDF()
        sol = sciax.simulate(LINEAR, y0, LINEAR_TS, p, method=method, rtol=1e-10, atol=1e-12, adjoint=ForwardMode())
        return jnp.sum(sol.ys[-1] ** 2)

    # Each derivative as one compiled program (not op by op around the solver's inner jit).
    # p as a float64 array (the argument type test_vmap_over_initial_conditions_and_params passes; no trace is shared).
    p = jnp.asarray(1.2)
    grad = float(jax.jit(jax.grad(loss))(p))
    tangent = float(jax.jit(lambda p: jax.jvp(forward_loss, (p,), (jnp.ones_like(p),))[1])(p))
    np.testing.assert_allclose(grad, exact, rtol=1e-6)
    np.testing.assert_allclose(tangent, grad, rtol=1e-9)


# The 2-D Brusselator on a small periodic grid (unforced): the large-stiff benchmark's problem at test size.
BRUSS_N = 6
_BRUSS = sciax.ode.brusselator_2d(BRUSS_N, forcing=False)
BRUSS, BRUSS_PATTERN, BRUSS_Z0 = _BRUSS.model, _BRUSS.pattern, _BRUSS.y0
_bruss_rhs = BRUSS.rhs
BRUSS_TS = jnp.array([0.0, 0.5, 1.5])
# (I - c alpha lap)^-1 on both species by FFT: the Newton-Krylov preconditioner for this problem.
BRUSS_DIFFUSION = _BRUSS.diffusion
KRYLOV = sciax.ode.BDF(jacobian="jvp", linear_solver=lx.GMRES(rtol=1e-8, atol=1e-14), preconditioner=BRUSS_DIFFUSION)


# Compiled right-hand side and Jacobian: scipy calls them ~10^4 times (op by op: ~14 s a reference).
_BRUSS_RHS = jax.jit(_bruss_rhs)
_BRUSS_JAC = jax.jit(jax.jacfwd(_bruss_rhs, argnums=1))


@functools.cache
def bruss_radau(alpha: float = 0.1, scale: float = 1.0) -> np.ndarray:
    """scipy Radau's Brusselator from `scale * BRUSS_Z0` at `BRUSS_TS` (rtol = atol = 1e-12), rows per time."""
    ref = solve_ivp(
        lambda t, z: np.asarray(_BRUSS_RHS(t, z, alpha)),
        (0.0, float(BRUSS_TS[-1])),
        scale * np.asarray(BRUSS_Z0),
        method="Radau",
        rtol=1e-12,
        atol=1e-12,
        t_eval=np.asarray(BRUSS_TS),
        jac=lambda t, z: np.asarray(_BRUSS_JAC(t, z, alpha)),
    )
    return ref.y.T


@pytest.mark.parametrize(
    "method",
    [
        sciax.ode.BDF(jacobian=BRUSS_PATTERN),
        sciax.ode.Rodas5P(jacobian=BRUSS_PATTERN),
        sciax.ode.Rodas5P(jacobian=BRUSS_PATTERN, linear_solver=lx.GMRES(rtol=1e-12, atol=1e-12)),
        KRYLOV,
    ],
    ids=["bdf-sparse-lu", "rodas5p-sparse-lu", "rodas5p-sparse-gmres", "bdf-newton-krylov"],
)
def test_sparse_jacobian_paths_agree_with_radau(method):
    sol = sciax.simulate(BRUSS, BRUSS_Z0, BRUSS_TS, 0.1, method=method, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.asarray(sol.ys), bruss_radau(), rtol=2e-6, atol=2e-6)


def test_grad_through_a_sparse_solve_matches_the_dense_jacobian():
    def final(alpha, method):
        return jnp.sum(sciax.simulate(BRUSS, BRUSS_Z0, BRUSS_TS, alpha, method=method, rtol=1e-8, atol=1e-8).ys[-1])

    # Under jit with alpha traced: one compilation of the dense solve serves both differences.
    sparse = jax.jit(jax.grad(lambda a: final(a, sciax.ode.BDF(jacobian=BRUSS_PATTERN))))(0.1)
    dense = jax.jit(lambda a: final(a, sciax.ode.BDF()))
    eps = 1e-4
    fd = (dense(0.1 + eps) - dense(0.1 - eps)) / (2 * eps)
    np.testing.assert_allclose(sparse, fd, rtol=1e-4)


def test_newton_krylov_under_vmap_and_jvp():
    # Forward mode: reverse mode through GMRES inside the checkpointed loop works too, but compiles for minutes.
    def loss(a):
        sol = sciax.simulate(BRUSS, BRUSS_Z0, BRUSS_TS, a, method=KRYLOV, rtol=1e-8, atol=1e-8, adjoint=ForwardMode())
        return jnp.sum(sol.ys[-1])

    alphas = jnp.array([0.08, 0.12])
    single = jax.jit(loss)  # traced once: the batched jvp below reuses its trace for the unbatched alpha
    values, tangents = jax.jit(jax.vmap(lambda a: jax.jvp(single, (a,), (jnp.ones_like(a),))))(alphas)
    eps = 1e-4
    for i, alpha in enumerate(alphas):
        np.testing.assert_allclose(values[i], single(alpha), rtol=1e-10)
        fd = (single(alpha + eps) - single(alpha - eps)) / (2 * eps)
        np.testing.assert_allclose(tangents[i], fd, rtol=1e-5)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"must be \(72, 72\)"):
        sciax.simulate(BRUSS, BRUSS_Z0, BRUSS_TS, 0.1, method=sciax.ode.BDF(jacobian=sp.identity(10)))
    with pytest.raises(ValueError, match="nonzero outside the pattern in row"):
        sciax.simulate(BRUSS, BRUSS_Z0, BRUSS_TS, 0.1, method=sciax.ode.BDF(jacobian=sp.identity(72)))
    # no pattern of its own, and one automatic detection cannot find (an FFT couples everything)
    spectral = sciax.ode.ODE(lambda t, z, a: a * jnp.fft.irfft(jnp.fft.rfft(z), n=z.size))
    with pytest.raises(ValueError, match="jacobian_sparsity.*'fft'"):
        sciax.simulate(spectral, BRUSS_Z0, BRUSS_TS, 0.1, method=sciax.ode.Rodas5P(jacobian="sparse"))
    with pytest.raises(ValueError, match="jacobian must be"):
        sciax.ode.BDF(jacobian="banded")
    with pytest.raises(TypeError, match="needs linear_solver=lineax.GMRES"):
        sciax.ode.BDF(jacobian="jvp")
    with pytest.raises(TypeError, match="preconditioner must be"):
        sciax.ode.BDF(preconditioner=BRUSS_DIFFUSION)
    wrong_grid = sciax.ode.DiffusionPreconditioner(sciax.grid.Grid((5, 5), 0.25), sciax.pde.Periodic(), 0.1)
    with pytest.raises(ValueError, match="whole fields on the grid"):
        method = sciax.ode.BDF(jacobian="jvp", linear_solver=lx.GMRES(rtol=1e-8, atol=1e-14), preconditioner=wrong_grid)
        sciax.simulate(BRUSS, BRUSS_Z0, BRUSS_TS, 0.1, method=method)
    with pytest.raises(TypeError, match="SparseLU"):
        sciax.ode.BDF(linear_solver=__import__("lineax").LU())


def test_failure_is_reported_not_garbage():
    sol = sciax.simulate(
        ROBER, jnp.array([1.0, 0.0, 0.0]), ROBER_TS, ROBER_K, method=sciax.ode.BDF(), max_steps=20, throw=False
    )
    assert not bool(sol.success)
    assert np.all(np.isinf(np.asarray(sol.ys[-1])))
    assert float(sol.stats["t_reached"]) < float(ROBER_TS[-1])
    with pytest.raises(Exception, match="max_steps"):
        sciax.simulate(ROBER, jnp.array([1.0, 0.0, 0.0]), ROBER_TS, ROBER_K, method=sciax.ode.BDF(), max_steps=20)


def test_non_finite_newton_updates_are_counted_and_end_in_a_reported_failure():
    # f is NaN below y = 0.5, which y = exp(-t) reaches at t = ln 2: every Newton update there is
    # non-finite, the step shrinks until it collapses, and the solve stops there instead of returning NaN.
    model = sciax.ode.ODE(lambda t, y, p: jnp.where(y < 0.5, jnp.nan, -y))
    sol = sciax.simulate(model, jnp.ones(1), jnp.array([0.0, 1.0]), None, method=sciax.ode.BDF(), throw=False)
    assert not bool(sol.success)
    assert np.all(np.isinf(np.asarray(sol.ys[-1])))
    np.testing.assert_allclose(float(sol.stats["t_reached"]), np.log(2.0), rtol=1e-3)
    assert int(sol.stats["num_nonfinite_linear_solves"]) >= 1
    assert int(sol.stats["num_newton_failures"]) >= int(sol.stats["num_nonfinite_linear_solves"])


def test_fd_models_supply_their_pattern():
    # A sciax.pde.fd model knows its stencil: jacobian="sparse" needs nothing else, and gives the dense result.
    grid = sciax.grid.Grid((16,), 1.0 / 16)
    model = sciax.pde.fd.gray_scott(grid, bc=sciax.pde.Periodic())
    bump = np.exp(-((((grid.coords()[0]) - 0.5) / 0.1) ** 2))
    y0 = {"u": jnp.asarray(1.0 - 0.5 * bump), "v": jnp.asarray(0.25 * bump)}
    params = {"Du": 2e-3, "Dv": 1e-3, "F": 0.04, "k": 0.06}
    pattern = model.jacobian_sparsity(y0)
    np.testing.assert_array_equal(
        sp.csr_matrix(pattern).toarray(), sciax.linalg.stencil_pattern(grid, 1, True, fields=2).toarray()
    )
    ts = jnp.array([0.0, 20.0])
    sparse = sciax.simulate(model, y0, ts, params, method=sciax.ode.BDF(jacobian="sparse"), rtol=1e-9, atol=1e-11)
    dense = sciax.simulate(model, y0, ts, params, method=sciax.ode.BDF(), rtol=1e-9, atol=1e-11)
    for key in ("u", "v"):
        np.testing.assert_allclose(sparse.ys[key], dense.ys[key], rtol=1e-9, atol=1e-12)


def test_vmap_through_a_sparse_solve():
    method = sciax.ode.BDF(jacobian=BRUSS_PATTERN)

    def final(z0, alpha):
        return sciax.simulate(BRUSS, z0, BRUSS_TS, alpha, method=method, rtol=1e-8, atol=1e-8).ys[-1]

    alphas = jnp.array([0.1, 0.2])
    z0s = jnp.stack([BRUSS_Z0, 1.1 * BRUSS_Z0])
    batched = jax.jit(jax.vmap(final))(z0s, alphas)
    for i in range(2):
        np.testing.assert_allclose(batched[i], final(z0s[i], alphas[i]), rtol=1e-12, atol=1e-12)
