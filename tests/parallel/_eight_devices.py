"""Checks on 8 forced CPU devices, run in a subprocess by `test_parallel.py` (one JAX start-up for all).

Run as `python -m tests.parallel._eight_devices` with
`XLA_FLAGS=--xla_force_host_platform_device_count=8`. Prints one line per check,
`error NAME: max relative difference to the single-device run` or
`raises NAME: ExceptionType: message`, and `done` at the end.
"""

import sys
import time

from tests._xla_flags import add_to_environment

# XLA compilation is most of this script's CPU time (about 180 programs, each run a few dozen steps on
# small grids), so it compiles cheaply as the rest of the suite does. The checks compare a sharded
# program with the single-device one, both compiled the same way, so the claims are the same.
add_to_environment("--xla_force_host_platform_device_count=8")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402
from sciax import parallel, pde  # noqa: E402


def rel(a, b) -> float:
    a, b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return max(
        float(np.max(np.abs(np.asarray(x) - np.asarray(y))) / np.max(np.abs(np.asarray(y)))) for x, y in zip(a, b)
    )


def report(name: str, value: float) -> None:
    print(f"error {name}: {value:.3e}", flush=True)


def expect_error(name: str, fn) -> None:
    try:
        fn()
    except (ValueError, TypeError) as e:
        print(f"raises {name}: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
    else:
        print(f"raises {name}: nothing", flush=True)


# Compilation, not running, is the time here: each check is one jitted program per model. Run eagerly,
# `simulate`'s input checks and a loss's sums compile a tiny program per operation, and a gradient with
# its forward compiles the forward twice (on its own and inside the gradient).
def jitted(fn, *args):
    """`fn(*args)` compiled as one program (models and arrays traced, functions and floats static)."""
    return eqx.filter_jit(fn)(*args)


@eqx.filter_jit
def forward_and_grad(run, loss, m, x, *args):
    """`run(m, x, *args)` and the gradient of `loss(run(m, x, *args))` in `x` from one program: the
    forward's saved outputs come back as the gradient's aux, so no separate forward program is compiled.
    Source indices go in `args`: traced, as a model checks concrete ones eagerly (not possible under jit)."""

    def value(x):
        out = run(m, x, *args)
        return loss(out), out

    grad, out = jax.grad(value, has_aux=True)(x)
    return out, grad


def compare(tag, run, loss, sharded, model, x, *args, grad=True):
    """Reports `tag`, the sharded forward against the single-device one, and with `grad` also `tag_grad`,
    the gradient in `x` of `loss` of the forward."""
    if not grad:
        report(tag, rel(jitted(run, sharded, x, *args), jitted(run, model, x, *args)))
        return
    (out, g), (ref, g_ref) = (forward_and_grad(run, loss, m, x, *args) for m in (sharded, model))
    report(tag, rel(out, ref))
    report(tag + "_grad", rel(g, g_ref))


def last_squared(ys):
    return jnp.sum(ys[-1] ** 2)


def seismogram_squared(ys):
    return jnp.sum(ys["seismogram"] ** 2)


def gaussian(grid, width=0.02):
    mesh = grid.meshgrid()
    centre = [o + 0.4 * length for o, length in zip(grid.origin, grid.lengths)]
    return jnp.asarray(np.exp(-sum((x - c) ** 2 for x, c in zip(mesh, centre)) / width))


def fd_heat(slab, pencil):
    for shape, bc, order, mesh, grad in [
        ((64, 16), pde.Dirichlet(0.5), 8, slab, True),
        ((16, 16, 8), pde.Periodic(), 2, pencil, False),
    ]:
        grid = pde.Grid(shape, 1.0)
        model = pde.fd.heat(grid, bc=bc, order=order)
        u0, ts = gaussian(grid), np.linspace(0.0, 4e-5, 3)
        d = jnp.asarray(1.0 + 0.5 * np.cos(2 * np.pi * grid.meshgrid()[0]))  # a grid field, split into blocks too

        def run(m, dd, u0=u0, ts=ts):
            return sciax.simulate(m, u0, ts, {"D": dd}, method=pde.RK4(2e-6)).ys

        sharded = parallel.shard(model, mesh)
        tag = f"heat{len(shape)}d_{type(bc).__name__}_o{order}_{'x'.join(map(str, mesh.devices.shape))}"
        compare(tag, run, last_squared, sharded, model, d, grad=grad)
    # An adaptive ODE method: global error norms, block-wise right-hand sides.
    grid = pde.Grid((32, 16), 1.0)
    model = pde.fd.heat(grid, bc=pde.Dirichlet(0.0), order=2)
    kw = dict(method=sciax.ode.Tsit5(), rtol=1e-8, atol=1e-10)
    ts = np.linspace(0.0, 2e-4, 3)

    def run(m, u0):
        return sciax.simulate(m, u0, ts, {"D": 1.0}, **kw).ys

    report(
        "heat2d_tsit5",
        rel(jitted(run, parallel.shard(model, slab), gaussian(grid)), jitted(run, model, gaussian(grid))),
    )


def fd_sponge(slab, pencil):
    """Sponge layers along the sharded axes: each block damps with its slice of the whole grid's profile."""
    for shape, bc, mesh, grad in [
        ((64, 16), ((pde.Sponge(12, 40.0), pde.Sponge(6, 20.0)), pde.Neumann()), slab, True),
        ((32, 16), pde.Sponge(5, 30.0), pencil, False),
    ]:
        grid = pde.Grid(shape, 1.0)
        model = pde.fd.heat(grid, bc=bc, order=4)
        u0, ts = gaussian(grid) + 1.0, np.linspace(0.0, 4e-4, 3)  # + 1: the layers have something to damp
        d = jnp.asarray(1.0 + 0.5 * np.cos(2 * np.pi * grid.meshgrid()[0]))

        def run(m, dd, u0=u0, ts=ts):
            return sciax.simulate(m, u0, ts, {"D": dd}, method=pde.RK4(2e-5)).ys

        sharded = parallel.shard(model, mesh)
        tag = f"sponge2d_o4_{'x'.join(map(str, mesh.devices.shape))}"
        compare(tag, run, last_squared, sharded, model, d, grad=grad)


def wave(slab, pencil):
    wave_harmonic(slab)
    for shape, mesh, bc, order, grad in [
        ((64, 48), slab, pde.Neumann(), 8, True),
        ((32, 16, 16), pencil, pde.Dirichlet(0.0), 4, False),
    ]:
        grid = pde.Grid(shape, 1.0)
        model = pde.AcousticWave(grid, f0=10.0, bc=bc, order=order)
        c = jnp.asarray(1.0 + 0.3 * gaussian(grid, 0.05))
        y0 = {"p": gaussian(grid, 0.005), "v": jnp.zeros(shape)}
        ts = np.linspace(0.0, 0.03, 3)

        def run(m, cc, y0=y0, ts=ts):
            return sciax.simulate(m, y0, ts, {"c": cc}, method=pde.Leapfrog(1e-3), save="p").ys["p"]

        sharded = parallel.shard(model, mesh)
        tag = f"wave{len(shape)}d_o{order}"
        if not grad:
            report(tag, rel(jitted(run, sharded, c), jitted(run, model, c)))
            continue
        # Traced y0 and c (their run-time checks): no whole-grid array in the per-device program.
        program = jax.jit(lambda cc, y, m=sharded: run(m, cc, y)).lower(c, y0).compile().as_text()
        print(f"gathers {tag}_fields: {'f64[{},{}]'.format(*shape) in program}", flush=True)
        # Full-waveform-inversion style gradient of a data misfit with respect to the velocity model.
        data = jitted(run, model, jnp.ones(shape))

        def misfit(p, data=data):
            return jnp.sum((p - data) ** 2)

        (out, g), (ref, g_ref) = (forward_and_grad(run, misfit, m, c) for m in (sharded, model))
        report(tag, rel(out, ref))
        report(tag + "_fwi_grad", rel(g, g_ref))


def wave_harmonic(slab):
    """`density_average="harmonic"` on blocks, its face values computed where read (as on large grids: the
    buoyancy read in each block's interior, its ghosts from the neighbours), order 2 one-pass step, variable
    density; the gradient in rho."""
    stores, pde.AcousticWave._stores_faces = pde.AcousticWave._stores_faces, lambda self: False
    try:
        _wave_harmonic(slab)
    finally:
        pde.AcousticWave._stores_faces = stores


def _wave_harmonic(slab):
    grid = pde.Grid((64, 48), 1.0)
    model = pde.AcousticWave(grid, f0=10.0, bc=pde.Neumann(), density_average="harmonic")
    c, y0 = jnp.asarray(1.0 + 0.3 * gaussian(grid, 0.05)), {"p": gaussian(grid, 0.005), "v": jnp.zeros(grid.shape)}
    ts = np.linspace(0.0, 0.03, 3)

    def run(m, rho):
        return sciax.simulate(m, y0, ts, {"c": c, "rho": rho}, method=pde.Leapfrog(1e-3), save="p").ys["p"]

    rho, sharded = jnp.asarray(1.0 + 0.5 * gaussian(grid, 0.02)), parallel.shard(model, slab)
    (out, g), (ref, g_ref) = (forward_and_grad(run, lambda p: jnp.sum(p**2), m, rho) for m in (sharded, model))
    report("wave2d_harmonic_o2", rel(out, ref))
    report("wave2d_harmonic_o2_grad", rel(g, g_ref))


def wave_padded(slab, pencil):
    """AcousticWave's padded-state Leapfrog step on each block (order 8, blocks of 16+ points per axis): the
    pressure's and the face fluxes' ghosts across inner sides from the neighbours; sources next to a block's
    edge, receivers on several blocks, a mixed-sides 3-D grid on the pencil mesh; a gradient."""
    for shape, mesh, bc in [
        ((128, 48), slab, (pde.Neumann(), pde.ZeroPadding())),  # zero ghosts: written on blocks only
        ((64, 32, 16), pencil, (pde.Dirichlet(0.0), (pde.Neumann(), pde.Dirichlet(0.5)), pde.Periodic())),
    ]:
        grid = pde.Grid(shape, 10.0 * shape[0])
        points = [[15, 20, 5][: len(shape)], [33, 9, 12][: len(shape)]]
        model = pde.AcousticWave(grid, f0=15.0, bc=bc, order=8, receivers=points + [[16, 3, 2][: len(shape)]])
        c = jnp.asarray(2000.0 + 300 * gaussian(grid, 500.0))
        y0 = {"p": gaussian(grid, 50.0), "v": jnp.zeros(shape)}
        ts, source = np.arange(0, 61, 20) * 1e-3, jnp.array(points)

        def run(m, cc, source, y0=y0, ts=ts):
            p = {"c": cc, "source": source}
            return sciax.simulate(m, y0, ts, p, method=pde.Leapfrog(1e-3), save=("p", "seismogram")).ys

        sharded = parallel.shard(model, mesh)
        tag = f"padded{len(shape)}d_o8_{'x'.join(map(str, mesh.devices.shape))}"
        print(f"route {tag}: {sharded.local.padded_step_applies()}", flush=True)
        if len(shape) == 3:
            report(tag, rel(jitted(run, sharded, c, source), jitted(run, model, c, source)))
            continue
        (out, g), (ref, g_ref) = (forward_and_grad(run, seismogram_squared, m, c, source) for m in (sharded, model))
        report(tag, rel(out, ref))
        report(tag + "_grad", rel(g, g_ref))


def wave_placed(slab, pencil):
    """AcousticWave with point sources, receivers and CPML layers along the sharded axes."""
    for shape, mesh, order in [((64, 48), slab, 4), ((48, 48), pencil, 2)]:
        grid = pde.Grid(shape, 10.0 * shape[0])
        receivers = [(6, j) for j in range(4, shape[1] - 4, 3)] + [(40, 30)]
        model = pde.AcousticWave(grid, f0=15.0, bc=pde.CPML(8), order=order, receivers=receivers)
        c = jnp.asarray(2000.0 + 300 * gaussian(grid, 500.0))
        y0 = {"p": jnp.zeros(shape), "v": jnp.zeros(shape)}
        ts, src = np.arange(0, 121, 40) * 2e-3, jnp.array([[25, 20], [9, 37]])

        def run(m, cc, src, y0=y0, ts=ts):
            return sciax.simulate(
                m,
                y0,
                ts,
                {"c": cc, "source": src},
                method=pde.Leapfrog(2e-3, checkpoint=16),
                save=("p", "seismogram"),
            ).ys

        sharded = parallel.shard(model, mesh)
        (out, g), (ref, g_ref) = (forward_and_grad(run, seismogram_squared, m, c, src) for m in (sharded, model))
        tag = f"placed{'x'.join(map(str, mesh.devices.shape))}_o{order}"
        report(tag + "_p", rel(out["p"], ref["p"]))
        report(tag + "_seismogram", rel(out["seismogram"], ref["seismogram"]))
        report(tag + "_grad", rel(g, g_ref))
    # The same with wide halos exchanged every 2 steps (the second source also lies in a neighbour's halo).
    shape, order = (128, 48), 4
    grid = pde.Grid(shape, 10.0 * shape[0])
    model = pde.AcousticWave(
        grid, f0=15.0, bc=pde.CPML(8), order=order, receivers=[(6, j) for j in range(4, 44, 3)] + [(40, 30)]
    )
    c = jnp.asarray(2000.0 + 300 * gaussian(grid, 500.0))
    y0 = {"p": jnp.zeros(shape), "v": jnp.zeros(shape)}
    ts, src = np.arange(0, 121, 40) * 2e-3, jnp.array([[9, 37], [25, 20]])

    def run(m, cc, src):
        return sciax.simulate(
            m,
            y0,
            ts,
            {"c": cc, "source": src},
            method=pde.Leapfrog(2e-3, checkpoint=16),
            save=("p", "seismogram"),
        ).ys

    sharded = parallel.shard(model, slab, halo_every=2)
    (out, g), (ref, g_ref) = (forward_and_grad(run, seismogram_squared, m, c, src) for m in (sharded, model))
    report("wideplaced8_o4_k2_p", rel(out["p"], ref["p"]))
    report("wideplaced8_o4_k2_seismogram", rel(out["seismogram"], ref["seismogram"]))
    report("wideplaced8_o4_k2_grad", rel(g, g_ref))


def elastic(slab, pencil):
    """ElasticWave: rigid edges (the padded-state step on the CPU, ghosts exchanged between blocks), CPML
    (padded on jax >= 0.12, the plain step before), periodic (plain); sources on a block's edge and in
    the layers' reach of one, receivers in several blocks; a gradient; RK4 on the method of lines."""
    fields = ("vx", "vz", "sxx", "szz", "sxz")
    shape = (64, 48)
    grid = pde.Grid(shape, (640.0, 480.0))
    x, z = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    vp = jnp.asarray(2000.0 + 300 * np.cos(x / 9) * np.sin(z / 7))
    params = {"vp": vp, "vs": 0.45 * vp, "rho": jnp.asarray(1.5 + 0.1 * np.sin(x / 5 + z / 3))}
    params["source"] = jnp.array([[31, 23], [32, 12]])
    receivers = [(20, 20), (40, 30), (31, 23), (32, 24), (9, 40)]
    y0 = {k: jnp.zeros(shape) for k in fields}
    ts = np.linspace(0.0, 0.06, 4)

    def run(m, p, method=None):
        method = pde.StaggeredLeapfrog(4e-4) if method is None else method
        return sciax.simulate(m, y0, ts, p, method=method, save=("vx", "szz", "sxz", "seismogram")).ys

    def run_vp(m, v, p):
        return run(m, {**p, "vp": v})

    rigid = pde.ElasticWave(grid, f0=15.0, bc=pde.Dirichlet(0), order=8, receivers=receivers)
    model, sharded = rigid, parallel.shard(rigid, slab)
    # A traced medium (its run-time checks): no whole-grid array in the per-device program.
    program = jax.jit(lambda p, m=sharded: run(m, p)).lower(params).compile()
    print(f"gathers elastic_fields: {'f64[{},{}]'.format(*shape) in program.as_text()}", flush=True)
    # The sharded forward from that program; the sharded gradient's aux forward goes unused.
    (_, g), (ref, g_ref) = (forward_and_grad(run_vp, seismogram_squared, m, vp, params) for m in (sharded, model))
    report("elastic_Dirichlet_o8_8", rel(program(params), ref))
    report("elastic_Dirichlet_o8_8_grad", rel(g, g_ref))
    model = pde.ElasticWave(grid, f0=15.0, bc=pde.CPML(6), order=4, source="vx", receivers=receivers)
    sharded = parallel.shard(model, pencil)
    ref = jitted(run, model, params)
    report("elastic_CPML_o4_4x2", rel(jitted(run, sharded, params), ref))

    # Shots batched with vmap, one source each: their sum is the run with both (the equations are linear).
    def shots(m, p):
        return jax.vmap(lambda q: run(m, {**p, "source": q[None]})["seismogram"])(p["source"])

    report("elastic_vmap_shots", rel(jnp.sum(jitted(shots, sharded, params), axis=0), ref["seismogram"]))
    model = pde.ElasticWave(grid, f0=15.0, bc=pde.Periodic(), order=2, source="vz", receivers=receivers)
    sharded = parallel.shard(model, pencil)
    report("elastic_Periodic_o2_4x2", rel(jitted(run, sharded, params), jitted(run, model, params)))
    # The method of lines pads every difference (zeros past the grid's edges, the neighbours' points inside).
    rk4 = pde.RK4(2e-4)
    report(
        "elastic_Dirichlet_o8_4x2_rk4",
        rel(jitted(run, parallel.shard(rigid, pencil), params, rk4), jitted(run, rigid, params, rk4)),
    )
    wide = parallel.shard(pde.ElasticWave(pde.Grid((256, 48), 1.0), f0=1.0, bc=pde.Periodic()), slab, halo_every=2)
    zeros = {k: jnp.zeros((256, 48)) for k in fields}
    method = pde.StaggeredLeapfrog(1e-3)
    expect_error("elastic_wide_halo", lambda: sciax.simulate(wide, zeros, ts, {"vp": 1.0, "vs": 0.5}, method=method))


def wide_halo(slab, pencil):
    """halo_every=k: wide halos exchanged every k steps, the same result as every step and as unsharded."""
    for shape, mesh, bc, order, k, grad in [
        ((64, 48), slab, pde.Neumann(), 2, 4, True),
        ((64, 32), slab, pde.Periodic(), 4, 2, False),
        ((32, 16, 16), pencil, pde.Dirichlet(0.0), 2, 2, False),
    ]:
        grid = pde.Grid(shape, 1.0)
        model = pde.AcousticWave(grid, f0=10.0, bc=bc, order=order)
        c = jnp.asarray(1.0 + 0.3 * gaussian(grid, 0.05))
        y0 = {"p": gaussian(grid, 0.005), "v": jnp.zeros(shape)}
        ts = np.linspace(0.0, 0.032, 3)

        def run(m, cc, y0=y0, ts=ts):
            return sciax.simulate(m, y0, ts, {"c": cc}, method=pde.Leapfrog(1e-3), save="p").ys["p"]

        sharded = parallel.shard(model, mesh, halo_every=k)
        tag = f"wide{len(shape)}d_{type(bc).__name__}_o{order}_k{k}"
        compare(tag, run, lambda p: jnp.sum(p**2), sharded, model, c, grad=grad)
    # RK4 on method-of-lines models: a step reads 4 * rhs_reach (order - 1) points; Sponge layers sharded too.
    for shape, bc, order, k, grad in [
        ((256, 8), pde.Dirichlet(0.5), 2, 4, True),
        ((384, 8), pde.Neumann(), 4, 2, True),
        ((128, 8), (pde.Sponge(20, 40.0), pde.Neumann()), 2, 2, False),
    ]:
        grid = pde.Grid(shape, 1.0)
        model = pde.fd.heat(grid, bc=bc, order=order)
        u0, ts = gaussian(grid, 0.005) + 1.0, np.arange(3) * 16e-6
        d = jnp.asarray(1.0 + 0.5 * np.cos(2 * np.pi * grid.meshgrid()[0]))

        def run(m, dd, u0=u0, ts=ts):
            return sciax.simulate(m, u0, ts, {"D": dd}, method=pde.RK4(2e-6)).ys

        sharded = parallel.shard(model, slab, halo_every=k)
        tag = f"widerk4_{type(bc[0] if isinstance(bc, tuple) else bc).__name__}_o{order}_k{k}"
        compare(tag, run, last_squared, sharded, model, d, grad=grad)
    wave = pde.AcousticWave(pde.Grid((64, 48), 1.0), f0=10.0, bc=pde.Neumann())
    y0 = {"p": jnp.zeros((64, 48)), "v": jnp.zeros((64, 48))}
    expect_error(
        "wide_halo_wider_than_shard",
        lambda: parallel.shard(
            pde.AcousticWave(pde.Grid((128, 40), 1.0), f0=10.0, bc=pde.Neumann(), order=8), slab, halo_every=2
        ),
    )
    expect_error(
        "wide_halo_interval_not_multiple",
        lambda: sciax.simulate(
            parallel.shard(wave, slab, halo_every=4),
            y0,
            np.linspace(0.0, 0.03, 2),
            {"c": 1.0},
            method=pde.Leapfrog(1e-3),
        ),
    )
    # Fits Leapfrog's halo (2 x 1 points) at shard time, not RK4's (2 x 4 x 1, 16 taken by the outer blocks of 8).
    expect_error(
        "wide_halo_rk4_wider_than_shard",
        lambda: sciax.simulate(
            parallel.shard(wave, slab, halo_every=2), y0, np.linspace(0.0, 4e-4, 2), {"c": 1.0}, method=pde.RK4(1e-4)
        ),
    )
    heat = pde.fd.heat(pde.Grid((128, 8), 1.0), bc=pde.Neumann())
    expect_error(
        "wide_halo_adaptive_method",
        lambda: sciax.simulate(
            parallel.shard(heat, slab, halo_every=2),
            gaussian(heat.grid),
            np.linspace(0.0, 1e-4, 2),
            {"D": 1.0},
            method=sciax.ode.Tsit5(),
        ),
    )


def finite_volume(slab, pencil):
    """2-D Euler, WENO5Z + HLLC + SSPRK3 on a 4 x 2 mesh: reflective walls along x, periodic along y,
    a pressure blob off centre; every stage exchanges halos and the CFL step is reduced over blocks."""
    grid = pde.Grid((32, 32), 1.0, points="centre")
    model = pde.fv.Euler(grid, (pde.fv.Reflective(), pde.fv.Periodic()))
    x, y = grid.meshgrid()
    p = 1.0 + 3.0 * np.exp(-((x - 0.3) ** 2 + (y - 0.6) ** 2) / 0.01)
    y0 = pde.fv.euler_conserved(1.0 + 0.2 * np.sin(2 * np.pi * y), (0.3 + 0.0 * x, 0.1 + 0.0 * x), p, 1.4)
    ts = np.array([0.0, 0.02, 0.04])  # about 20 steps

    def run(m):
        sol = sciax.simulate(m, y0, ts, {"gamma": 1.4}, method=pde.fv.SSPRK3(0.5))
        return sol.ys, sol.stats["num_steps"]

    (ys, steps), (ref, ref_steps) = jitted(run, parallel.shard(model, pencil)), jitted(run, model)
    report("fv_euler2d_4x2", rel(ys, ref) + abs(int(steps) - int(ref_steps)))
    print(f"steps fv_euler2d_4x2: {int(steps)}", flush=True)
    # WENO5 reads 3 cells past each face: 2 cells per block along x are too few.
    expect_error("fv_halo_wider_than_shard", lambda: parallel.shard(pde.fv.Euler(pde.Grid((16, 16), 1.0)), slab))


class Closure(eqx.Module):
    """A periodic three-point stencil plus a quadratic term, `pde.learned.SpectralCorrected`'s net."""

    w: jax.Array

    def __call__(self, u):
        return self.w[0] * u + self.w[1] * (jnp.roll(u, 1) + jnp.roll(u, -1) - 2 * u) + self.w[2] * u**2


def spectral(slab, pencil):
    grid = pde.Grid((32, 32), 2 * np.pi)
    x, y = grid.meshgrid()
    w0 = jnp.asarray(np.sin(x) * np.cos(2 * y) + 0.3 * np.cos(3 * x + y))
    model = pde.spectral.navier_stokes_2d(grid, forcing_mode=4)
    ts = np.linspace(0.0, 0.2, 3)

    def run(m, nu):
        return sciax.simulate(m, w0, ts, {"nu": nu, "forcing": 0.5}, method=pde.ETDRK4(dt=0.05)).ys

    sharded = parallel.shard(model, slab)
    compiled = jax.jit(lambda nu: run(sharded, nu)).lower(1e-2).compile()
    print(f"gathers ns2d: {'all-gather' in compiled.as_text()}", flush=True)  # the distributed FFT gathers nothing
    # The sharded forward from that program; the sharded gradient's aux forward goes unused.
    (_, g), (ref, g_ref) = (forward_and_grad(run, lambda w: jnp.sum(w**2), m, 1e-2) for m in (sharded, model))
    report("ns2d_slab", rel(compiled(1e-2), ref))
    report("ns2d_grad", rel(g, g_ref))
    grid1 = pde.Grid(128, 32 * np.pi)
    u0 = jnp.asarray(np.cos(grid1.coords()[0] / 16) * (1 + np.sin(grid1.coords()[0] / 16)))
    ks = pde.spectral.kuramoto_sivashinsky(grid1)

    def run1(m, u):
        return sciax.simulate(m, u, np.linspace(0.0, 2.0, 3), None, method=pde.ETDRK4(dt=0.25)).ys

    report("ks_slab", rel(jitted(run1, parallel.shard(ks, slab), u0), jitted(run1, ks, u0)))
    # A learned closure in the nonlinear term: the net sees the global state, the FFTs are distributed.
    hybrid = pde.learned.SpectralCorrected(ks, Closure(jnp.array([-0.1, 0.05, 0.02])))
    compare("ks_corrected_slab", run1, last_squared, parallel.shard(hybrid, slab), hybrid, u0)
    grid3 = pde.Grid((16, 16, 8), 2 * np.pi)
    u3 = jnp.asarray(np.sin(grid3.meshgrid()[0]) * np.cos(grid3.meshgrid()[1]) + np.cos(2 * grid3.meshgrid()[2]))
    local = parallel.shard(pde.spectral.heat(grid3), pencil).local.grid
    report("fft3d_pencil", rel(jax.jit(lambda u: pde.spectral.to_spectral(u, local))(u3), jax.jit(jnp.fft.rfftn)(u3)))


def ensembles(slab, pencil):
    grid = pde.Grid(64, 2 * np.pi)
    model = pde.spectral.burgers(grid)
    x = grid.coords()[0]
    y0 = jnp.asarray(np.stack([np.sin(x + k) * (1 + 0.1 * k) for k in range(16)]))
    nus = jnp.linspace(0.05, 0.2, 16)
    ts, method = np.linspace(0.0, 0.5, 3), pde.ETDRK4(dt=0.05)

    def ensemble(m, n):
        return parallel.ensemble(m, y0, ts, {"nu": n}, mesh=slab, in_axes=(0, 0), method=method).ys

    def vmapped(m, n):
        return jax.vmap(lambda y, nu: sciax.simulate(m, y, ts, {"nu": nu}, method=method).ys)(y0, n)

    def squared(ys):
        return jnp.sum(ys**2)

    # The single-device forward and gradient from one program: the same run, nus and loss.
    ref, g_ref = forward_and_grad(vmapped, squared, model, nus)
    out = parallel.ensemble(model, y0, ts, {"nu": nus}, mesh=pencil, in_axes=(0, 0), method=method)
    report("ensemble", rel(out.ys, ref))
    print(f"ensemble spec: {out.ys.sharding.spec}", flush=True)
    report("ensemble_grad", rel(forward_and_grad(ensemble, squared, model, nus)[1], g_ref))


def seismic_shots(slab, pencil):
    # FWI shots split over the mesh's x axis (4 devices; replicated along y), the model replicated:
    # seismograms, illumination and the misfit gradient (summed over devices) against one device.
    seismic, grid = pde.seismic, pde.Grid((20, 20), 200.0)
    survey = seismic.Survey(
        grid, [[5, j] for j in (5, 8, 11, 14)], [[6, j] for j in range(4, 16, 3)], f0=25.0, bc=pde.CPML(4)
    )
    c = jnp.asarray(2000.0 + 20.0 * np.arange(20.0)[:, None] * np.ones(20))
    wavelet = seismic.Wavelet.ricker(25.0, 1e-3, 40, dtype=jnp.float64)

    def shots(mesh, c=c, energy=False):
        return seismic.model_shots(survey, c, wavelet, 1e-3, checkpoint=8, energy=energy, mesh=mesh, axis="x")

    report("seismic_shots_4x2", rel(shots(pencil, energy=True), shots(None, energy=True)))
    observed = shots(None, c * 1.02, energy=True)[0]  # the seismograms of the program just compiled
    grad = jax.jit(jax.grad(lambda c, mesh: seismic.l2_misfit(shots(mesh, c), observed)), static_argnums=1)
    report("seismic_shots_4x2_grad", rel(grad(c, pencil), grad(c, None)))
    expect_error("seismic_shots_not_divisible", lambda: shots(slab))


def bad_input(slab, pencil):
    heat = pde.fd.heat(pde.Grid((30, 16), 1.0), bc=pde.Neumann())
    expect_error("not_divisible", lambda: parallel.shard(heat, slab))
    expect_error(
        "halo_wider_than_shard",
        lambda: parallel.shard(pde.fd.heat(pde.Grid((32, 16), 1.0), bc=pde.Neumann(), order=8), slab),
    )
    expect_error(
        "unknown_mesh_axis",
        lambda: parallel.shard(pde.fd.heat(pde.Grid((32, 16), 1.0), bc=pde.Neumann()), slab, axes=("w", None)),
    )
    expect_error("fft_sharded_last_axis", lambda: parallel.shard(pde.spectral.heat(pde.Grid((16, 16), 1.0)), pencil))
    expect_error("fft_1d_not_square_divisible", lambda: parallel.shard(pde.spectral.heat(pde.Grid(40, 1.0)), slab))
    expect_error(
        "ensemble_not_divisible",
        lambda: parallel.ensemble(
            pde.spectral.heat(pde.Grid(16, 1.0)),
            jnp.ones((6, 16)),
            np.linspace(0, 1, 2),
            {"nu": 1.0},
            mesh=slab,
            method=pde.ETDRK4(dt=0.5),
        ),
    )


def main(names):
    slab, pencil = parallel.make_mesh("slab"), parallel.make_mesh("pencil")
    for name in names or (
        "fd_heat",
        "fd_sponge",
        "wave",
        "wave_padded",
        "wave_placed",
        "elastic",
        "wide_halo",
        "finite_volume",
        "spectral",
        "ensembles",
        "seismic_shots",
        "bad_input",
    ):
        start = time.perf_counter()
        globals()[name](slab, pencil)
        print(f"seconds {name}: {time.perf_counter() - start:.1f}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
