"""AcousticWave + Leapfrog: reference scheme, energy, CPML, gradients, vmap, bad input (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

from ._fd_reference import reference_wave

W = sciax.pde


def _zeros(shape):
    return {"p": jnp.zeros(shape), "v": jnp.zeros(shape)}


@pytest.mark.parametrize("density_average, stored", [("arithmetic", True), ("harmonic", True), ("harmonic", False)])
def test_reproduces_reference_scheme(density_average, stored, monkeypatch):
    # The harmonic rule's face values stored once (small grids) or computed where read (large grids; forced here).
    monkeypatch.setattr(W.AcousticWave, "_stores_faces", lambda self: stored)
    nx, ny, dx, dy, dt, n, f0, src = 40, 50, 5.0, 4.0, 8e-4, 300, 25.0, (15, 20)
    rng = np.random.default_rng(0)
    c = 1500 + 500 * rng.random((nx, ny))
    rho = 1000 + 800 * rng.random((nx, ny))
    harmonic = density_average == "harmonic"
    ref = reference_wave(c, rho, dx, dy, dt, n, f0, src, harmonic=harmonic)
    # The two rules give other fields on this rough medium (far beyond the tolerance below).
    other = reference_wave(c, rho, dx, dy, dt, n, f0, src, harmonic=not harmonic)
    assert np.max(np.abs(other - ref)) > 1e-3 * np.max(np.abs(ref))
    grid = W.Grid((nx, ny), (nx * dx, ny * dy))
    model = W.AcousticWave(grid, f0=f0, bc=W.Neumann(), order=2, density_average=density_average)
    sol = sciax.simulate(
        model,
        _zeros((nx, ny)),
        np.arange(n + 1) * dt,
        {"c": c, "rho": rho, "source": jnp.array(src)},
        method=W.Leapfrog(dt),
        save="p",
    )
    np.testing.assert_allclose(sol.ys["p"][-1], ref, rtol=0, atol=1e-12 * np.max(np.abs(ref)))


@pytest.mark.parametrize("density_average", ["arithmetic", "harmonic"])
def test_energy_conserved_in_periodic_box(density_average):
    n, h, dt, steps = 32, 1.0, 0.2, 1000
    grid = W.Grid((n, n), n * h)
    x, y = grid.meshgrid()
    c = 1.0 + 0.3 * np.sin(2 * np.pi * x / n)
    rho = 1.0 + 0.2 * np.cos(2 * np.pi * y / n)
    p0 = np.exp(-((x - 16) ** 2 + (y - 12) ** 2) / 8)
    model = W.AcousticWave(grid, f0=1.0, bc=W.Periodic(), density_average=density_average)
    sol = sciax.simulate(
        model,
        {"p": jnp.asarray(p0), "v": jnp.zeros((n, n))},
        np.arange(steps + 1) * dt,
        {"c": c, "rho": rho},
        method=W.Leapfrog(dt),
        save="p",
    )
    p = np.asarray(sol.ys["p"])
    kappa = rho * c**2
    if density_average == "harmonic":  # the density at the half points whose inverse the step reads
        rho_x, rho_y = (2 / (1 / rho + 1 / np.roll(rho, -1, axis)) for axis in (0, 1))
    else:
        rho_x, rho_y = (0.5 * (rho + np.roll(rho, -1, axis)) for axis in (0, 1))
    dxp = (np.roll(p, -1, 1) - p) / h  # axis 1 of (time, x, y) is x
    dyp = (np.roll(p, -1, 2) - p) / h
    # The leapfrog invariant: kinetic energy of the half-step velocity plus the potential cross term.
    kinetic = np.sum(((p[1:] - p[:-1]) / dt) ** 2 / kappa, axis=(1, 2))
    potential = np.sum(dxp[1:] * dxp[:-1] / rho_x + dyp[1:] * dyp[:-1] / rho_y, axis=(1, 2))
    energy = kinetic + potential
    assert np.max(np.abs(energy - energy[0])) / energy[0] < 1e-6


def _shot(n, bc, steps):
    h, dt = 10.0, 2e-3
    grid = W.Grid((n, n), n * h)
    model = W.AcousticWave(grid, f0=15.0, bc=bc)
    src = jnp.array([n // 2, n // 2])
    sol = sciax.simulate(
        model, _zeros((n, n)), np.arange(steps + 1) * dt, {"c": 2000.0, "source": src}, method=W.Leapfrog(dt), save="p"
    )
    return np.asarray(sol.ys["p"])


def test_cpml_reflects_under_one_percent():
    small, width, steps = 100, 20, 380
    big = 340  # reflections from its edges cannot reach the compared region in time
    p_small = _shot(small, W.CPML(width), steps)
    p_big = _shot(big, W.Neumann(), steps)
    off = (big - small) // 2
    inner = slice(width, small - width)
    region_small = p_small[:, inner, inner]
    region_big = p_big[:, off + width : off + small - width, off + width : off + small - width]
    incident = np.max(np.sum(region_big**2, axis=(1, 2)))
    reflected = np.sum((region_small[-1] - region_big[-1]) ** 2)
    assert np.sum(region_big[-1] ** 2) < 0.05 * incident  # the direct wave has left the region
    assert reflected < 0.01 * incident


def _misfit_problem():
    n, h, dt, steps = 24, 10.0, 2e-3, 120
    grid = W.Grid((n, n), n * h)
    receivers = [(3, j) for j in range(2, n - 2, 4)]
    model = W.AcousticWave(grid, f0=20.0, bc=W.CPML(6), receivers=receivers)
    ts = np.arange(steps + 1) * dt
    method = W.Leapfrog(dt, checkpoint=16)

    def record(c, src):
        sol = sciax.simulate(model, _zeros((n, n)), ts, {"c": c, "source": src}, method=method, save="seismogram")
        return sol.ys["seismogram"]

    return n, record


def test_gradient_of_misfit_matches_finite_differences():
    n, record = _misfit_problem()
    src = jnp.array([12, 12])
    c_true = jnp.full((n, n), 2000.0).at[14:, :].set(2400.0)
    observed = record(c_true, src)

    def loss(c):
        return jnp.mean((record(c, src) - observed) ** 2)

    # A unique maximum (which sets the CPML damping, held fixed under differentiation) that the
    # finite-difference probe leaves unchanged.
    c0 = jnp.full((n, n), 2100.0).at[0, 0].set(2500.0)
    g = jax.grad(loss)(c0)
    direction = jnp.asarray(np.random.default_rng(1).standard_normal((n, n))).at[0, 0].set(0.0)
    eps = 1e-2
    fd_value = (loss(c0 + eps * direction) - loss(c0 - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(jnp.sum(g * direction), fd_value, rtol=1e-5)


@pytest.mark.parametrize("density_average, stored", [("arithmetic", True), ("harmonic", True), ("harmonic", False)])
def test_density_gradient_matches_finite_differences(density_average, stored, monkeypatch):
    # Through the face values of 1 / rho on every route the step takes (interior and edge strips).
    monkeypatch.setattr(W.AcousticWave, "_stores_faces", lambda self: stored)
    n, h, dt, steps = 24, 10.0, 1e-3, 100
    model = W.AcousticWave(
        W.Grid((n, n), n * h),
        f0=20.0,
        bc=W.Neumann(),
        receivers=[(3, j) for j in range(2, n - 2, 4)],
        density_average=density_average,
    )
    ts, method, src = np.arange(steps + 1) * dt, W.Leapfrog(dt, checkpoint=16), jnp.array([12, 12])
    rng = np.random.default_rng(2)
    c = jnp.asarray(2000 + 200 * rng.random((n, n)))

    def record(rho):
        params = {"c": c, "rho": rho, "source": src}
        return sciax.simulate(model, _zeros((n, n)), ts, params, method=method, save="seismogram").ys["seismogram"]

    observed = record(jnp.full((n, n), 1000.0).at[14:, :].set(1500.0))

    def loss(rho):
        return jnp.mean((record(rho) - observed) ** 2)

    rho0 = jnp.asarray(1100 + 300 * rng.random((n, n)))
    g = jax.grad(loss)(rho0)
    direction = jnp.asarray(rng.standard_normal((n, n)))
    eps = 1e-2  # kg/m^3, against densities of 1100-1400
    fd_value = (loss(rho0 + eps * direction) - loss(rho0 - eps * direction)) / (2 * eps)
    assert abs(float(fd_value)) > 0
    np.testing.assert_allclose(jnp.sum(g * direction), fd_value, rtol=1e-5)


def test_vmap_over_sources():
    n, record = _misfit_problem()
    c = jnp.full((n, n), 2000.0)
    sources = jnp.array([[12, 6], [12, 18], [8, 12]])
    batched = jax.vmap(record, in_axes=(None, 0))(c, sources)
    for i in range(3):
        np.testing.assert_allclose(batched[i], record(c, sources[i]), rtol=1e-10, atol=1e-15)


def test_3d_and_method_of_lines_agree_with_leapfrog():
    grid = W.Grid((14, 12, 10), (14.0, 12.0, 10.0))
    x, y, z = grid.meshgrid()
    p0 = jnp.asarray(np.exp(-((x - 7) ** 2 + (y - 6) ** 2 + (z - 5) ** 2) / 4))
    model = W.AcousticWave(grid, f0=1.0, bc=W.Periodic(), order=4)
    y0 = {"p": p0, "v": jnp.zeros_like(p0)}
    ts = np.arange(0, 41) * 0.05
    leap = sciax.simulate(model, y0, ts, {"c": 1.0}, method=W.Leapfrog(0.05), save=("p", "v"))
    mol = sciax.simulate(model, y0, ts, {"c": 1.0}, method=sciax.ode.Tsit5(), rtol=1e-8, atol=1e-10)
    assert np.max(np.abs(leap.ys["p"][-1] - mol.ys["p"][-1])) < 2e-3 * np.max(np.abs(p0))


def test_traced_inputs_are_checked_at_run_time():
    # Under jit the values are unknown when traced: the same checks run in the compiled program (on
    # a scalar added back to each array, so that sharded fields stay sharded) and good input passes
    # through unchanged.
    grid = W.Grid((20, 20), 200.0)
    model = W.AcousticWave(grid, f0=10.0, bc=W.CPML(4))
    ts = np.arange(5) * 1e-3
    method, source = W.Leapfrog(1e-3), jnp.asarray((10, 10))
    run = jax.jit(
        lambda c, y0: sciax.simulate(model, y0, ts, {"c": c, "source": source}, method=method, save="p").ys["p"]
    )
    c, y0 = jnp.full((20, 20), 1500.0), _zeros((20, 20))
    expected = sciax.simulate(model, y0, ts, {"c": c, "source": source}, method=method, save="p").ys["p"]
    assert float(jnp.max(jnp.abs(expected))) > 0
    np.testing.assert_array_equal(np.asarray(run(c, y0)), np.asarray(expected))
    with pytest.raises(Exception, match=r'params\["c"\] must be > 0 everywhere'):
        jax.block_until_ready(run(c.at[3, 4].set(0.0), y0))
    with_rho = jax.jit(
        lambda rho: sciax.simulate(model, y0, ts, {"c": c, "rho": rho, "source": source}, method=method).ys["p"]
    )
    with pytest.raises(Exception, match=r'params\["rho"\] must be > 0 everywhere'):
        jax.block_until_ready(with_rho(jnp.ones((20, 20)).at[2, 2].set(-1.0)))
    with pytest.raises(Exception, match=r"Leapfrog dt exceeds the CFL limit"):
        jax.block_until_ready(run(10 * c, y0))
    with pytest.raises(Exception, match=r"y0\['p'\] contains NaN or inf"):
        jax.block_until_ready(run(c, {**y0, "p": y0["p"].at[0, 0].set(jnp.nan)}))


def test_bad_input():
    grid = W.Grid((20, 20), 200.0)
    model = W.AcousticWave(grid, f0=10.0, bc=W.CPML(4))
    ts = np.arange(5) * 1e-3
    zeros = _zeros((20, 20))

    def run(p, dt=1e-3, y0=zeros):
        return sciax.simulate(model, y0, ts * dt / 1e-3, p, method=W.Leapfrog(dt))

    with pytest.raises(ValueError, match=r"shape \(10, 20\), but the grid has shape \(20, 20\)"):
        run({"c": jnp.ones((10, 20))})
    with pytest.raises(ValueError, match=r"\['p'\] has shape \(20, 21\), but the grid has shape \(20, 20\)"):
        run({"c": 1500.0}, y0=_zeros((20, 21)))
    with pytest.raises(ValueError, match="outside the grid"):
        run({"c": 1500.0, "source": jnp.array([25, 3])})
    # A concrete source captured by a jitted function: still checked when traced, and a valid one runs.
    c, outside, inside = jnp.full((20, 20), 1500.0), jnp.array([25, 3]), jnp.array([5, 3])
    with pytest.raises(ValueError, match=r"source \[\[25, 3\]\] lies outside the grid of shape \(20, 20\)"):
        jax.jit(lambda c: run({"c": c, "source": outside}).ys)(c)
    assert np.all(np.isfinite(jax.jit(lambda c: run({"c": c, "source": inside}).ys["p"])(c)))
    with pytest.raises(ValueError, match="receiver .* outside the grid"):
        W.AcousticWave(grid, f0=10.0, bc=W.CPML(4), receivers=[(0, 20)])
    with pytest.raises(ValueError, match=r"largest stable dt is 0\.00471"):
        run({"c": 1500.0}, dt=1e-2)
    with pytest.raises(ValueError, match=r'params\["c"\] must be > 0'):
        run({"c": jnp.zeros((20, 20))})
    with pytest.raises(ValueError, match=r'params\["rho"\] must be > 0'):
        run({"c": 1500.0, "rho": -1.0})
    with pytest.raises(ValueError, match="order must be one of"):
        W.AcousticWave(grid, f0=10.0, bc=W.CPML(4), order=5)
    with pytest.raises(ValueError, match=r"density_average must be one of \('arithmetic', 'harmonic'\), got 'mean'"):
        W.AcousticWave(grid, f0=10.0, bc=W.CPML(4), density_average="mean")
    with pytest.raises(ValueError, match="not Sponge"):
        W.AcousticWave(grid, f0=10.0, bc=W.Sponge(4, 1.0))
    with pytest.raises(TypeError, match="Leapfrog steps second-order"):
        sciax.simulate(
            sciax.pde.fd.heat(grid, bc=W.Periodic()), jnp.zeros((20, 20)), ts, {"D": 1.0}, method=W.Leapfrog(1e-3)
        )


def test_rk4_has_its_own_stable_dt():
    grid = W.Grid((20, 20), 200.0)
    ts = np.arange(5) * 6e-3
    neumann = W.AcousticWave(grid, f0=10.0, bc=W.Neumann())
    omega = 2.0 / float(neumann.leapfrog_stable_dt({"c": 1500.0}))
    # No layer: RK4 reaches 2 sqrt(2) along the imaginary axis, the leapfrog 2.
    np.testing.assert_allclose(float(W.RK4(1e-3).stable_dt(neumann, {"c": 1500.0})), 2 * np.sqrt(2) / omega, rtol=1e-12)
    with pytest.raises(ValueError, match=r"largest stable dt is 0\.00471"):
        sciax.simulate(neumann, _zeros((20, 20)), ts, {"c": 1500.0}, method=W.Leapfrog(6e-3))
    sol = sciax.simulate(
        neumann, {"p": jnp.ones((20, 20)), "v": jnp.zeros((20, 20))}, ts, {"c": 1500.0}, method=W.RK4(6e-3)
    )
    assert bool(sol.success)
    with pytest.raises(ValueError, match=r"RK4\(dt=0\.007\) violates the CFL .* largest stable dt is 0\.00666"):
        sciax.simulate(neumann, _zeros((20, 20)), np.arange(3) * 7e-3, {"c": 1500.0}, method=W.RK4(7e-3))
    # CPML: the damping rate d / kappa + alpha, largest in a corner (both axes' layers: 2 d0),
    # finite in float32 too (it was -log(exp(-rate)), which underflows to inf).
    for dtype in (jnp.float32, jnp.float64):
        cpml = W.AcousticWave(grid, f0=10.0, bc=W.CPML(4))
        c = jnp.full((20, 20), 1500.0, dtype)
        d_max, _ = cpml.spectral_radius({"c": c})
        d0 = 3 * 1500.0 * np.log(1e3) / (2 * 4 * 10.0)
        np.testing.assert_allclose(float(d_max), 2 * d0, rtol=1e-5)
        limit = float(W.RK4(1e-3).stable_dt(cpml, {"c": c}))
        np.testing.assert_allclose(limit, 1 / (2 * d0 / 2.785293563405282 + omega / (2 * np.sqrt(2))), rtol=1e-5)
        y0 = {"p": jnp.ones((20, 20), dtype), "v": jnp.zeros((20, 20), dtype)}
        sol = sciax.simulate(cpml, y0, np.arange(5) * 1e-3, {"c": c}, method=W.RK4(1e-3))
        assert bool(sol.success) and sol.ys["p"].dtype == dtype


def test_add_at_receivers_is_the_transpose_of_record():
    # <record(p), g> = <p, add_at_receivers(0, g)> for every p and g, with two receivers on one point.
    grid = W.Grid((12, 10), (1.2, 1.0))
    model = W.AcousticWave(grid, f0=10.0, bc=W.Periodic(), receivers=[(2, 3), (7, 1), (2, 3)])
    rng = np.random.default_rng(0)
    p, g = rng.standard_normal((2, 12, 10)), rng.standard_normal((2, 3))
    added = np.asarray(model.add_at_receivers(jnp.zeros((2, 12, 10)), jnp.asarray(g)))
    np.testing.assert_allclose(np.sum(np.asarray(model.record(jnp.asarray(p))) * g), np.sum(p * added), rtol=1e-12)
    expected = np.zeros((2, 12, 10))
    for k, (i, j) in enumerate(model.receivers):
        expected[:, i, j] += g[:, k]
    np.testing.assert_array_equal(added, expected)
