"""`sciax.pde.ElasticWave` under `StaggeredLeapfrog`: exact 2-D solutions (P and S waves from an initial
state, the explosive point source's Green's function), convergence orders, discrete energy, gradients,
transformations and bad input. All in float64."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.polynomial.legendre import leggauss
from scipy.special import j1

import sciax
from sciax.pde import CPML, Dirichlet, ElasticWave, Grid, Periodic, StaggeredLeapfrog

jax.config.update("jax_enable_x64", True)

FIELDS = ("vx", "vz", "sxx", "szz", "sxz")


def zeros(n):
    z = jnp.zeros((n, n))
    return {k: z for k in FIELDS}


# ---- P and S waves from an initial state (exact by Hankel transforms) -----------------------------
# v0 = grad(phi0) + curl(chi0 e_y), sigma0 = 0, with Gaussian potentials a exp(-r^2 / 2 s^2): in a
# homogeneous medium phi and chi obey the 2-D scalar wave equation with speeds vp and vs and zero
# initial rate, so d/dr of each is -int_0^inf k^2 a s^2 exp(-k^2 s^2 / 2) cos(c k t) J1(k r) dk.
S, VP, VS, RHO, A_P, A_S = 3.0, 2.0, 1.0, 1.5, 1.0, -0.7
K = np.linspace(0, 12 / S, 6001)


def radial(r, t, c, a):
    if not np.any(t):  # t = 0: the Gaussian's own derivative
        return -a * r / S**2 * np.exp(-(r**2) / (2 * S**2))
    f = -(K**2) * a * S**2 * np.exp(-((K * S) ** 2) / 2) * np.cos(c * K * t[:, None]) * j1(K * r[:, None])
    return np.sum(0.5 * (f[:, 1:] + f[:, :-1]) * np.diff(K), axis=1)


def exact_velocity(x, z, t, centre):
    dx, dz = x - centre, z - centre
    r = np.hypot(dx, dz) + 1e-300
    p, s = radial(r, t, VP, A_P), radial(r, t, VS, A_S)
    return (p * dx + s * dz) / r, (p * dz - s * dx) / r  # vx = phi_x + chi_z, vz = phi_z - chi_x


@functools.cache
def initial_value_error(h, order, courant, rk4=False):
    """Largest error of (vx, vz) at three receivers over 0 <= t <= 16, relative to the largest value."""
    n, T = int(round(100 / h)), 16.0
    centre = (n // 2) * h
    x = np.arange(n) * h
    X, Z = np.meshgrid(x, x, indexing="ij")
    vx0 = exact_velocity((X + h / 2).ravel(), Z.ravel(), np.zeros(n * n), centre)[0].reshape(n, n)
    vz0 = exact_velocity(X.ravel(), (Z + h / 2).ravel(), np.zeros(n * n), centre)[1].reshape(n, n)
    offsets = ((12, 0), (0, 9), (-8, 8))
    receivers = [(n // 2 + int(a / h), n // 2 + int(b / h)) for a, b in offsets]
    model = ElasticWave(Grid((n, n), n * h), f0=1.0, receivers=receivers, bc=Dirichlet(0), order=order)
    params = {"vp": VP, "vs": VS, "rho": RHO}
    steps = 40 * math.ceil(T / (courant * float(model.staggered_stable_dt(params))) / 40)
    dt, ts = T / steps, np.linspace(0, T, 41)
    y0 = {**zeros(n), "vx": jnp.asarray(vx0), "vz": jnp.asarray(vz0)}
    seis = np.asarray(
        sciax.simulate(model, y0, ts, params, method=StaggeredLeapfrog(dt), save="seismogram").ys["seismogram"]
    )
    tv, err, top = ts - dt / 2, 0.0, 0.0  # the saved velocity is half a step behind
    for k, (i, j) in enumerate(receivers):
        ex = exact_velocity(np.full(41, (i + 0.5) * h), np.full(41, j * h), tv, centre)[0]
        ez = exact_velocity(np.full(41, i * h), np.full(41, (j + 0.5) * h), tv, centre)[1]
        err = max(err, np.abs(seis[1:, k, 0] - ex[1:]).max(), np.abs(seis[1:, k, 1] - ez[1:]).max())
        top = max(top, np.abs(ex).max(), np.abs(ez).max())
    return err / top


def test_p_and_s_waves_match_the_exact_solution():
    # 13 points per wavelength at the spectrum's peak (k = sqrt(2) / s) for the S waves.
    assert initial_value_error(1.0, 4, 0.1) < 0.01


def test_method_of_lines():
    # `rhs` under sciax.pde.RK4 (its own CFL limit, from `spectral_radius`).
    assert initial_value_error(1.0, 4, 0.5, rk4=True) < 0.01


@pytest.mark.parametrize("order, courant, expected", [(2, 0.4, 2), (4, 0.1, 4)])
def test_convergence_order(order, courant, expected):
    # Order 2: dt proportional to h (second order in time and space); order 4: a small Courant
    # number so that the spatial error dominates.
    e1, e2 = initial_value_error(1.0, order, courant), initial_value_error(0.5, order, courant)
    assert abs(math.log2(e1 / e2) - expected) < 0.3


# ---- the explosive point source: the 2-D Green's function ----------------------------------------
# sxx_t, szz_t += M(t) delta: v = grad(phi) with phi_tt = vp^2 lap(phi) + M delta / rho, so
# phi = 1/(2 pi rho vp^2) int_{r/vp}^t M(t - tau) / sqrt(tau^2 - r^2/vp^2) dtau
#     = 1/(2 pi rho vp^2) int_0^{acosh(vp t / r)} M(t - (r/vp) cosh u) du   (smooth integrand).
GVP, GVS, GRHO, F0, H = 2000.0, 1150.0, 1800.0, 20.0, 5.0
GU, GW = leggauss(400)


def ricker_np(t):
    a, tau = (math.pi * F0) ** 2, t - 1.2 / F0
    return (1 - 2 * a * tau**2) * np.exp(-a * tau**2) * (t > 0)


def potential(r, t):
    top = np.arccosh(np.maximum(GVP * t / r, 1.0))
    u = 0.5 * top[:, None] * (GU + 1)
    return (
        0.5 * top * np.sum(GW * ricker_np(t[:, None] - r[:, None] / GVP * np.cosh(u)), -1) / (2 * np.pi * GRHO * GVP**2)
    )


def test_explosive_source_matches_the_greens_function():
    # 20 points per P wavelength at f0; CPML all round (its reflections would show at the receivers).
    n, src, dt = 140, (70, 70), 5e-4
    receivers = [(110, 70), (70, 105), (100, 95)]
    model = ElasticWave(Grid((n, n), n * H), f0=F0, receivers=receivers, bc=CPML(20), order=4)
    params = {"vp": GVP, "vs": GVS, "rho": GRHO, "source": jnp.array(src)}
    ts = np.arange(0, 0.25 + dt / 2, 4 * dt)
    seis = np.asarray(
        sciax.simulate(model, zeros(n), ts, params, method=StaggeredLeapfrog(dt), save="seismogram").ys["seismogram"]
    )
    tv = ts - dt / 2
    for k, (i, j) in enumerate(receivers):
        for comp, (ox, oz) in enumerate(((0.5, 0.0), (0.0, 0.5))):
            dx, dz = (i + ox - src[0]) * H, (j + oz - src[1]) * H
            if abs(dx if comp == 0 else dz) < H:
                continue  # the exact component vanishes (up to the half-cell offset)
            r = np.full_like(tv, math.hypot(dx, dz))
            vr = (potential(r + 1e-3, tv) - potential(r - 1e-3, tv)) / 2e-3
            exact = vr * (dx if comp == 0 else dz) / r
            assert np.abs(seis[:, k, comp] - exact).max() < 0.01 * np.abs(exact).max()


# ---- discrete energy -------------------------------------------------------------------------------
def medium(n, seed=0):
    rng = np.random.default_rng(seed)
    vp = 2.0 + 0.5 * rng.random((n, n))
    return {"vp": vp, "vs": vp * (0.3 + 0.25 * rng.random((n, n))), "rho": 1.0 + rng.random((n, n))}


def energy(ys, params, periodic, harmonic=False):
    """E(t) = 1/2 sum rho v(t - dt/2) . v(t + dt/2) + 1/2 sum sigma : C^-1 sigma, conserved exactly by the
    staggered leapfrog when the differences are antisymmetric (zero or periodic edges). The medium at
    the staggered positions as documented: 1/rho from two-point means of rho (or with `harmonic` of
    1/rho), mu at sxz a four-point mean."""
    vp, vs, rho = (np.asarray(params[k]) for k in ("vp", "vs", "rho"))

    def nxt(a, axis):
        return (
            np.roll(a, -1, axis) if periodic else np.concatenate([np.delete(a, 0, axis), np.take(a, [-1], axis)], axis)
        )

    mu, lam2mu = rho * vs**2, rho * vp**2
    lam = lam2mu - 2 * mu
    mu_xz = 0.25 * (mu + nxt(mu, 0) + nxt(mu, 1) + nxt(nxt(mu, 0), 1))
    if harmonic:
        rx, rz = (2 / (1 / rho + 1 / nxt(rho, axis)) for axis in (0, 1))
    else:
        rx, rz = 0.5 * (rho + nxt(rho, 0)), 0.5 * (rho + nxt(rho, 1))
    det = lam2mu**2 - lam**2
    vx, vz, sxx, szz, sxz = (np.asarray(ys[k]) for k in FIELDS)
    kinetic = 0.5 * np.sum(rx * vx[:-1] * vx[1:] + rz * vz[:-1] * vz[1:], axis=(1, 2))
    strain = (lam2mu * (sxx**2 + szz**2) - 2 * lam * sxx * szz) / det + sxz**2 / mu_xz
    return kinetic + 0.5 * np.sum(strain[:-1], axis=(1, 2))


@pytest.mark.parametrize(
    "bc, average", [(Dirichlet(0), "arithmetic"), (Periodic(), "arithmetic"), (Dirichlet(0), "harmonic")]
)
def test_energy_is_conserved_without_sources_or_layers(bc, average):
    n, params = 32, medium(32)
    model = ElasticWave(Grid((n, n), float(n)), f0=1.0, bc=bc, order=4, density_average=average)
    x = np.arange(n) - n / 2
    bump = np.exp(-(x[:, None] ** 2 + x[None, :] ** 2) / 8)
    y0 = {**zeros(n), "vx": jnp.asarray(bump), "szz": jnp.asarray(np.roll(bump, 3, 0))}
    dt = 0.9 * float(model.staggered_stable_dt(params))
    ts = dt * np.arange(151)
    ys = sciax.simulate(model, y0, ts, params, method=StaggeredLeapfrog(dt), save=FIELDS).ys
    e = energy(ys, params, isinstance(bc, Periodic), average == "harmonic")
    assert np.abs(np.asarray(ys["vx"][-1]) - bump).max() > 0.1  # the waves moved
    np.testing.assert_allclose(e, e[0], rtol=1e-12)
    # The other rule's energy is not conserved: the rules differ on this rough medium.
    other = energy(ys, params, isinstance(bc, Periodic), average != "harmonic")
    assert np.max(np.abs(other - other[0])) > 1e-6 * abs(other[0])


# ---- gradients and transformations (a tiny grid with CPML) -------------------------------------------
N = 24
SMALL = ElasticWave(Grid((N, N), float(N)), f0=0.3, receivers=[(8, 15), (15, 9)], bc=CPML(4), order=2)
SHOTS = jnp.array([[10, 12], [14, 11]])
DT, TS = 0.12, 0.12 * np.arange(0, 61, 4)


@jax.jit
def seismogram(vp, vs, rho, source):
    """The receivers' (vx, vz) on SMALL; every argument an array (one compiled program per transformation)."""
    params = {"vp": vp, "vs": vs, "rho": rho, "source": source}
    method = StaggeredLeapfrog(DT, checkpoint=None)
    return sciax.simulate(SMALL, zeros(N), TS, params, method=method, save="seismogram").ys["seismogram"]


def fields(vp, vs, rho):
    return tuple(jnp.full((N, N), x, dtype=jnp.float64) for x in (vp, vs, rho))


def test_gradient_of_a_misfit_matches_finite_differences():
    base = tuple(jnp.asarray(medium(N, 1)[k]) for k in ("vp", "vs", "rho"))
    observed = seismogram(*fields(2.2, 1.0, 1.5), SHOTS[0])

    def misfit(vp, vs, rho):
        return 0.5 * jnp.sum((seismogram(vp, vs, rho, SHOTS[0]) - observed) ** 2)

    grads = jax.jit(jax.grad(misfit, argnums=(0, 1, 2)))(*base)
    rng = np.random.default_rng(2)
    for k in range(3):
        direction = rng.standard_normal((N, N))
        # The CPML profile follows max(vp) but is held fixed under differentiation: keep max(vp) fixed.
        direction[np.unravel_index(np.argmax(base[0]), (N, N))] = 0.0
        eps = 1e-5 * float(jnp.max(base[k]))

        def moved(sign, k=k, direction=direction, eps=eps):
            return misfit(*(f + sign * eps * direction if i == k else f for i, f in enumerate(base)))

        fd = (moved(1) - moved(-1)) / (2 * eps)
        np.testing.assert_allclose(float(jnp.sum(grads[k] * direction)), float(fd), rtol=1e-6)
        assert abs(float(fd)) > 0


def test_jit_and_vmap_over_shots_and_parameters():
    medium_ = fields(2.0, 1.1, 1.3)
    one = [seismogram(*medium_, s) for s in SHOTS]
    shots = jax.vmap(seismogram, in_axes=(None, None, None, 0))(*medium_, SHOTS)
    scale = float(jnp.max(jnp.abs(shots)))
    np.testing.assert_allclose(shots, np.stack(one), rtol=1e-12, atol=1e-14 * scale)
    assert float(jnp.max(jnp.abs(shots[0] - shots[1]))) > 1e-3 * scale
    vps = jnp.stack([medium_[0], jnp.full((N, N), 2.3, dtype=jnp.float64)])
    batched = jax.vmap(seismogram, in_axes=(0, None, None, None))(vps, *medium_[1:], SHOTS[0])
    np.testing.assert_allclose(batched[0], one[0], rtol=1e-12, atol=1e-14 * scale)
    single = seismogram(vps[1], *medium_[1:], SHOTS[0])
    np.testing.assert_allclose(batched[1], single, rtol=1e-12, atol=1e-14 * scale)
    assert float(jnp.max(jnp.abs(batched[0] - batched[1]))) > 1e-3 * scale


# ---- bad input ------------------------------------------------------------------------------------
def test_bad_input():
    grid = Grid((40, 40), 40.0)
    model = ElasticWave(grid, f0=0.3, receivers=[(20, 20)], bc=CPML(8))
    vp = np.full((40, 40), 2.0)
    vs = np.full((40, 40), 1.0)
    vs[12, 30] = 1.8  # > sqrt(3)/2 * 2 = 1.732
    method = StaggeredLeapfrog(0.1)
    ts = np.linspace(0.0, 1.0, 3)

    def run(params, y0=None, method=method):
        return sciax.simulate(model, zeros(40) if y0 is None else y0, ts, params, method=method)

    with pytest.raises(ValueError, match=r"density_average must be one of \('arithmetic', 'harmonic'\), got 'mean'"):
        ElasticWave(grid, f0=0.3, bc=CPML(8), density_average="mean")
    with pytest.raises(ValueError, match=r"bulk modulus .* at grid point \(12, 30\): vp = 2.0, vs = 1.8"):
        run({"vp": vp, "vs": vs})
    with pytest.raises(ValueError, match=r"source \(3, 20\) lies inside the CPML layer \(width 8\) on the low side"):
        run({"vp": 2.0, "vs": 1.0, "source": jnp.array([3, 20])})
    with pytest.raises(ValueError, match=r"source \(20, 45\) lies outside the grid of shape \(40, 40\)"):
        run({"vp": 2.0, "vs": 1.0, "source": jnp.array([20, 45])})
    with pytest.raises(ValueError, match=r"receiver \(20, 35\) lies inside the CPML layer \(width 8\) on the high"):
        ElasticWave(grid, f0=0.3, receivers=[(20, 35)], bc=CPML(8))
    with pytest.raises(ValueError, match=r"receiver \(-1, 5\) lies outside the grid"):
        ElasticWave(grid, f0=0.3, receivers=[(-1, 5)], bc=Dirichlet(0))
    with pytest.raises(ValueError, match=r'params\["vs"\] has shape \(30, 40\), but the grid has shape \(40, 40\)'):
        run({"vp": 2.0, "vs": np.ones((30, 40))})
    with pytest.raises(ValueError, match=r'params\["vs"\] must be finite and >= 0'):
        run({"vp": 2.0, "vs": -1.0})
    with pytest.raises(ValueError, match=r'params\["rho"\] must be finite and > 0'):
        run({"vp": 2.0, "vs": 1.0, "rho": 0.0})
    with pytest.raises(ValueError, match=r"\['sxz'\] has shape \(40, 39\), but the grid has shape \(40, 40\)"):
        run({"vp": 2.0, "vs": 1.0}, {**zeros(40), "sxz": jnp.zeros((40, 39))})
    with pytest.raises(ValueError, match=r"state must be a dict with keys"):
        run({"vp": 2.0, "vs": 1.0}, {k: jnp.zeros((40, 40)) for k in ("vx", "vz", "sxx", "szz")})
    # The stable step of the staggered scheme: vp dt / h <= 1 / sqrt(2) at order 2 (Virieux 1986), 0.606
    # at order 4 (Levander 1988), in 2-D with equal spacing.
    for order, courant in ((2, 1 / math.sqrt(2)), (4, 0.606)):
        m = ElasticWave(grid, f0=0.3, bc=Dirichlet(0), order=order)
        assert m.staggered_stable_dt({"vp": 2.0, "vs": 1.0}) == pytest.approx(courant / 2.0, rel=1e-3)
    with pytest.raises(ValueError, match=r"violates the CFL condition .* largest stable dt is 0.30"):
        sciax.simulate(model, zeros(40), [0.0, 0.62], {"vp": 2.0, "vs": 1.0}, method=StaggeredLeapfrog(0.31))
    with pytest.raises(ValueError, match="source must be one of"):
        ElasticWave(grid, f0=0.3, source="vy")
    with pytest.raises(ValueError, match="bc must be CPML"):
        ElasticWave(grid, f0=0.3, bc=sciax.pde.Neumann())
    with pytest.raises(TypeError, match="StaggeredLeapfrog steps velocity-stress wave models"):
        sciax.simulate(
            sciax.pde.AcousticWave(grid, f0=0.3, bc=Dirichlet(0)),
            {"p": jnp.zeros((40, 40)), "v": jnp.zeros((40, 40))},
            ts,
            {"c": 1.0},
            method=method,
        )


def test_a_dt_above_the_limit_blows_up():
    # The bound is sharp: 1 % above it the homogeneous run grows without bound (the check is off).
    n = 16
    model = ElasticWave(Grid((n, n), float(n)), f0=0.3, bc=Periodic(), order=2)
    params = {"vp": 2.0, "vs": 1.0}
    limit = float(model.staggered_stable_dt(params))
    rng = np.random.default_rng(3)
    y0 = {k: jnp.asarray(rng.standard_normal((n, n))) for k in FIELDS}

    def final(dt):
        ts = dt * np.array([0, 400])
        method = StaggeredLeapfrog(dt)
        # Bypass the driver's CFL check to observe the growth itself.
        run = sciax.pde._fixed_step._compiled_run(())
        ys = run(method, model, y0, jnp.asarray(ts), params, (400,), ("vx",), False).ys
        return float(jnp.max(jnp.abs(ys["vx"][-1])))

    assert final(0.99 * limit) < 10.0
    assert not final(1.01 * limit) < 1e3


# ---- a point force: the 2-D elastodynamic Green's tensor ---------------------------------------------
# rho u_tt = div(sigma) + F(t) delta e_j has (frequency domain, 2-D Helmholtz Green's function g_c)
# G_ij = delta_ij g_b / mu + d_i d_j (g_b - g_a) / (rho w^2) (the 2-D form of Aki & Richards' 3-D tensor;
# Kausel 2006). In time, g_c * h is K_c(h) = 1/(2 pi) int_0^acosh(ct/r) h(t - (r/c) cosh u) du and 1/w^2
# a double integral with a minus sign, so the velocity is
#     v_i = delta_ij K_vs(F') / mu - d_i d_j [K_vs(F1) - K_vp(F1)] / rho,   F1 the integral of F.
# F = ricker = -(1/2a) g'' with g = exp(-a (t - t0)^2), so F1 = -(g' - g'(0)) / 2a.
F_F0 = 12.0  # 19 points per S wavelength at f0
F_A, F_T0 = (math.pi * F_F0) ** 2, 1.2 / F_F0


def force_wavelets(t):
    tau = t - F_T0
    g = np.exp(-F_A * tau**2)
    f1 = -(-2 * F_A * tau * g - 2 * F_A * F_T0 * np.exp(-F_A * F_T0**2)) / (2 * F_A)
    df = (-4 * F_A * tau - 2 * F_A * tau * (1 - 2 * F_A * tau**2)) * g
    return np.where(t > 0, f1, 0.0), np.where(t > 0, df, 0.0)


def kernel(r, t, c, h):
    top = np.arccosh(np.maximum(c * t / r, 1.0))
    u = 0.5 * top[:, None] * (GU + 1)
    return 0.5 * top * np.sum(GW * h(t[:, None] - r / c * np.cosh(u)), -1) / (2 * np.pi)


def force_velocity(dx, dz, t, i, j):
    """v_i at offset (dx, dz) from a force along axis j."""
    r, e = math.hypot(dx, dz), 1e-2
    f1 = lambda s: force_wavelets(s)[0]  # noqa: E731

    def w(rr):
        return kernel(rr, t, GVS, f1) - kernel(rr, t, GVP, f1)

    w0, wp, wm = w(r), w(r + e), w(r - e)
    d1, d2 = (wp - wm) / (2 * e), (wp - 2 * w0 + wm) / e**2
    g = (dx, dz)[i] * (dx, dz)[j] / r**2
    dij = d2 * g + d1 / r * ((i == j) - g)
    return (i == j) * kernel(r, t, GVS, lambda s: force_wavelets(s)[1]) / (GRHO * GVS**2) - dij / GRHO


def test_point_force_matches_the_greens_tensor():
    # P and S waves, near field included; the force along z sits at vz[70, 70], (x_70, z_70 + h/2).
    n, src, dt = 140, (70, 70), 5e-4
    receivers = [(105, 70), (70, 100), (95, 92)]
    model = ElasticWave(Grid((n, n), n * H), f0=F_F0, source="vz", receivers=receivers, bc=CPML(20), order=4)
    params = {"vp": GVP, "vs": GVS, "rho": GRHO, "source": jnp.array(src)}
    ts = np.arange(0, 0.35 + dt / 2, 4 * dt)
    seis = np.asarray(
        sciax.simulate(model, zeros(n), ts, params, method=StaggeredLeapfrog(dt), save="seismogram").ys["seismogram"]
    )
    tv = ts - dt / 2
    for k, (a, b) in enumerate(receivers):
        for i, (ox, oz) in enumerate(((0.5, 0.0), (0.0, 0.5))):
            exact = force_velocity((a + ox - src[0]) * H, (b + oz - src[1] - 0.5) * H, tv, i, 1)
            assert np.abs(seis[:, k, i] - exact).max() < 0.01 * np.abs(exact).max()
