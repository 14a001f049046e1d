"""The one-pass leapfrog step (`sciax.grid.split_evaluate`: interior from shifted slices, edge strips
from folded blocks) against the halo-padded step it replaces (float64)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.grid import fits, split_evaluate
from sciax.pde.waves._cpml import CPMLMemory
from sciax.pde.waves._leapfrog import _Fields

W = sciax.pde

CASES = [
    ((40, 36), W.Neumann(), 2),
    ((40, 44), W.Dirichlet(0.5), 4),
    ((48, 40), W.Periodic(), 8),
    ((50, 46), W.CPML(6), 4),
    ((20, 24, 28), W.CPML(3), 2),
    ((32, 30, 28), ((W.Neumann(), W.Dirichlet(0.3)), W.Periodic(), W.CPML(4)), 6),
]
# `density_average="harmonic"`: the face values computed from the buoyancy at the points where read (the interior
# without CPML from shifted slices, the edge strips from folded blocks of it and its ghosts), as on large grids
# (forced here); "harmonic-stored": stored once, as at order 4 and on small grids.
HARMONIC = [
    ((40, 36), W.Neumann(), 2),
    ((44, 40), W.Dirichlet(0.5), 4),
    ((48, 40), W.Periodic(), 8),
    ((50, 46), W.CPML(6), 4),
    ((20, 24, 28), ((W.Neumann(), W.Dirichlet(0.3)), W.Periodic(), W.Neumann()), 2),
]
BOTH = (
    [(*case, "arithmetic") for case in CASES]
    + [(*case, "harmonic") for case in HARMONIC]
    + [(*case, "harmonic-stored") for case in HARMONIC[:2]]
)


def _coefficients(model, params, average):
    """`model.wave_coefficients`, the harmonic rule's face values stored or not as `average` says."""
    with pytest.MonkeyPatch.context() as patch:
        if average.startswith("harmonic"):
            patch.setattr(W.AcousticWave, "_stores_faces", lambda self: average == "harmonic-stored")
        return model.wave_coefficients(params, 1e-3)


def _fields(shape, bc, order, seed=1, average="arithmetic"):
    rng = np.random.default_rng(seed)
    model = W.AcousticWave(W.Grid(shape, 1.0), f0=5.0, bc=bc, order=order, density_average=average.split("-")[0])
    params = {"c": jnp.asarray(1 + rng.random(shape)), "rho": jnp.asarray(1 + rng.random(shape))}
    operator = _coefficients(model, params, average).operator
    # Computed where read or stored, as asked.
    assert all((f.points is None) == (average != "harmonic") for f in operator.inv_rho_faces)
    memory = tuple(
        None if c is None else CPMLMemory(*(jnp.asarray(rng.standard_normal(shape)) for _ in range(2)))
        for c in operator.cpml
    )
    p, p_prev = (jnp.asarray(rng.standard_normal(shape)) for _ in range(2))
    return model, _Fields(jnp.asarray(0.1), p, p_prev, operator, memory)


def _padded(model):
    return lambda f, grid=None: W.Leapfrog(1e-3)._update(model, f, grid)


def _split(model, fields, out=None):
    assert fits(model.grid, model.order - 1)
    interior = lambda f: W.Leapfrog(1e-3)._update_interior(model, f, model.order - 1)  # noqa: E731
    return split_evaluate(_padded(model), interior, fields, model.grid, model.order - 1, out)


def _over_prev(f):
    """`split_evaluate`'s `overwrite`: the new field over `p_prev` (read only where written), fresh memory."""
    return f.p_prev, jax.tree_util.tree_map(jnp.zeros_like, f.memory)


def _spare(fields, fill=7.0):
    """Buffers of the step's outputs (new field, memory) whose values must not matter."""
    return jax.tree_util.tree_map(lambda a: jnp.full_like(a, fill), (fields.p, fields.memory))


@pytest.mark.parametrize("shape, bc, order, average", BOTH)
def test_one_pass_step_equals_padded_step(shape, bc, order, average):
    model, fields = _fields(shape, bc, order, average=average)
    padded = _padded(model)(fields)
    # Into new buffers, written over given ones (`out=`, the leapfrog loop's spare buffer), and over `p_prev`.
    interior = lambda f: W.Leapfrog(1e-3)._update_interior(model, f, model.order - 1)  # noqa: E731
    over = lambda f: split_evaluate(_padded(model), interior, f, model.grid, model.order - 1, None, _over_prev)  # noqa: E731
    splits = [jax.jit(lambda f: _split(model, f))(fields), jax.jit(lambda f: _split(model, f, _spare(f)))(fields)]
    for split in splits + [jax.jit(over)(fields)]:
        for a, b in zip(jax.tree_util.tree_leaves(padded), jax.tree_util.tree_leaves(split), strict=True):
            assert float(jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(a))) < 1e-14


@pytest.mark.parametrize("stores", [False, True])
def test_one_pass_order4_flux_fused_or_stored_equals_padded(stores, monkeypatch):
    # Order 4 stores the face flux on grids in cache only (`_stores_flux`); the tests' grids are all small.
    import sciax.pde.waves._acoustic as acoustic

    monkeypatch.setattr(acoustic, "_stores_flux", lambda order, points: order >= 6 or stores)
    model, fields = _fields(*CASES[1])
    padded, split = _padded(model)(fields), jax.jit(lambda f: _split(model, f))(fields)
    assert float(jnp.max(jnp.abs(padded[0] - split[0])) / jnp.max(jnp.abs(padded[0]))) < 1e-14


@pytest.mark.parametrize(
    "shape, bc, order, average", [c for c in BOTH if len(c[0]) == 2 and not isinstance(c[1], W.CPML)]
)
def test_one_pass_joint_fluxes_equal_padded(shape, bc, order, average, monkeypatch):
    # Both face fluxes from one pass (`_joint_fluxes`, on large 2-D grids from order 6), forced here at every
    # order and density rule, against the halo-padded step.
    import sciax.pde.waves._acoustic as acoustic

    monkeypatch.setattr(acoustic, "_joint_flux_pays", lambda order, points, threads: True)
    model, fields = _fields(shape, bc, order, average=average)
    assert model._joint_fluxes(fields.p, fields.operator) is not None
    padded, split = _padded(model)(fields), jax.jit(lambda f: _split(model, f))(fields)
    assert float(jnp.max(jnp.abs(padded[0] - split[0])) / jnp.max(jnp.abs(padded[0]))) < 1e-14


def test_flux_storage_rule_follows_the_cpu_measurements():
    from sciax.pde.waves._acoustic import _stores_flux

    assert not _stores_flux(2, 300**2) and _stores_flux(4, 300**2) and not _stores_flux(4, 400**2)
    assert _stores_flux(6, 2000**2) and _stores_flux(8, 200**3)


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="an XLA:CPU rule")
def test_joint_flux_rule_follows_the_cpu_measurements(monkeypatch):
    from sciax.pde.waves import _leapfrog as leapfrog
    from sciax.pde.waves._flux_rules import _joint_flux_pays

    # Without AVX-512 the step runs in place on several cores too (`_in_place_pays`), and so joint.
    monkeypatch.setattr(leapfrog, "_masked_loads_emulated", lambda: True)
    assert _joint_flux_pays(6, 2000**2, 2) and _joint_flux_pays(8, 2000**2, 2)
    monkeypatch.setattr(leapfrog, "_masked_loads_emulated", lambda: False)
    for threads in (1, 2):
        # One core: faster at orders 6 and 8 from 1000^2 (even at 600^2), slower at order 4 in cache.
        assert _joint_flux_pays(8, 1000**2, threads) and _joint_flux_pays(6, 1000**2, threads)
        assert not _joint_flux_pays(4, 300**2, threads) and not _joint_flux_pays(8, 300**2, threads)
        # Two cores, 2000^2 order 6: out of place, where the joint pass ran 1.9x slower.
        assert _joint_flux_pays(6, 2000**2, threads) is (threads == 1)


@pytest.mark.parametrize("shape, bc, order, average", BOTH[:4] + BOTH[len(CASES) : len(CASES) + 2])
def test_one_pass_taylor_start_equals_padded(shape, bc, order, average, monkeypatch):
    # Leapfrog's start p- = p0 - dt v0 + dt^2 K(p0) / 2 in one pass (where the steps take it) and halo-padded.
    import sciax.pde.waves._leapfrog as leapfrog

    model, fields = _fields(shape, bc, order, average=average)
    y0 = {"p": fields.p, "v": fields.p_prev}
    coefficients, method = leapfrog.WaveCoefficients(fields.operator, None), W.Leapfrog(1e-3)
    one_pass = jax.jit(lambda y: method.init(model, y, coefficients).p_prev)(y0)
    monkeypatch.setattr(leapfrog, "_split_pays", lambda *a: False)
    padded = jax.jit(lambda y: method.init(model, y, coefficients).p_prev)(y0)
    assert float(jnp.max(jnp.abs(one_pass - padded)) / jnp.max(jnp.abs(padded))) < 1e-14
    assert float(jnp.max(jnp.abs(padded - (fields.p - 1e-3 * fields.p_prev)))) > 1e-7  # dt^2 K / 2 is there


@pytest.mark.parametrize("shape, bc, order", [CASES[1], CASES[3]])
def test_one_pass_step_derivatives_equal_padded(shape, bc, order):
    model, fields = _fields(shape, bc, order)

    def loss(update, p, k):
        f = fields._replace(p=p, operator=fields.operator._replace(kappa=k))
        new, memory = update(f)
        return jnp.sum(new**3) + sum(jnp.sum(m**2) for m in jax.tree_util.tree_leaves(memory))

    def derivatives(update):
        # One compiled program per update: the gradients in p and kappa and a forward-mode derivative.
        def both(p, k):
            grads = jax.grad(lambda *a: loss(update, *a), (0, 1))(p, k)
            return grads, jax.jvp(lambda q: loss(update, q, k), (p,), (jnp.ones_like(p),))[1]

        return jax.jit(both)(fields.p, fields.operator.kappa)

    ref_grads, ref_tangent = derivatives(_padded(model))
    # The spare buffers' values take no part in the derivatives either.
    for split in (lambda f: _split(model, f), lambda f: _split(model, f, _spare(f))):
        grads, tangent = derivatives(split)
        for ref, out in zip(ref_grads, grads, strict=True):
            assert float(jnp.max(jnp.abs(ref - out)) / jnp.max(jnp.abs(ref))) < 1e-13
        assert abs(float(ref_tangent - tangent)) <= 1e-13 * abs(float(ref_tangent))


@pytest.mark.parametrize("shape, bc, order", [HARMONIC[0], HARMONIC[2]])
def test_harmonic_density_gradient_equals_padded(shape, bc, order):
    # The gradient in rho reaches the interior through the buoyancy, the edge strips through the face arrays.
    model, fields = _fields(shape, bc, order, average="harmonic")
    c = jnp.asarray(1 + np.random.default_rng(4).random(shape))

    def loss(update, rho):
        operator = _coefficients(model, {"c": c, "rho": rho}, "harmonic").operator
        return jnp.sum(update(fields._replace(operator=operator))[0] ** 3)

    rho = jnp.asarray(1 + np.random.default_rng(5).random(shape))
    ref = jax.jit(jax.grad(lambda r: loss(_padded(model), r)))(rho)
    out = jax.jit(jax.grad(lambda r: loss(lambda f: _split(model, f), r)))(rho)
    assert float(jnp.max(jnp.abs(ref))) > 0
    assert float(jnp.max(jnp.abs(ref - out)) / jnp.max(jnp.abs(ref))) < 1e-13


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the one-pass route is taken on XLA:CPU")
@pytest.mark.parametrize("in_place", [True, False])
def test_leapfrog_loop_makes_no_padded_copy(in_place, monkeypatch):
    # Per step: one fusion writes the new pressure; no full-size concatenate (a padded copy) and no
    # full-size copy of the carried fields. In place, each step writes over the pressure two steps back (two
    # buffers, two steps per loop iteration) where XLA keeps the barrier that orders the edge strips'
    # reads first (jax >= 0.12), else over a spare buffer (three buffers, three steps per iteration). Out of
    # place (several cores, large grids), each new field's buffer takes the spare's place.
    import sciax.pde.waves._leapfrog as leapfrog

    monkeypatch.setattr(leapfrog, "_in_place_pays", lambda *a: in_place)

    n = 256
    grid = W.Grid((n, n), (5.0 * n, 5.0 * n))
    model = W.AcousticWave(grid, f0=25.0, bc=W.Neumann())
    y0 = {"p": jnp.zeros((n, n), jnp.float32), "v": jnp.zeros((n, n), jnp.float32)}
    params = {"c": jnp.full((n, n), 2000.0, jnp.float32), "source": jnp.asarray((n // 2, n // 2))}
    ts = np.arange(0, 201, 100) * 5e-4
    # A checkpoint per variant (no effect on 100-step intervals) keeps simulate's cached programs apart.
    method = W.Leapfrog(5e-4, checkpoint=None if in_place else 10**6)
    run = jax.jit(lambda p: sciax.simulate(model, y0, ts, p, method=method, save="p").ys["p"])
    text = run.lower(params).compile().as_text()
    full = f"f32[{n},{n}]"
    big = [line for line in text.splitlines() if "=" in line and full in line.split("=")[1][:20]]
    assert not [line for line in big if " concatenate(" in line]
    trips = "50" if leapfrog._overwrites_prev(model) else "33"
    loops = [line for line in text.splitlines() if "known_trip_count" in line and f'"n":"{trips}"' in line]
    assert loops, f"the 100-step interval should run as {trips} iterations (two or three steps each)"
    body = loops[0].split("body=")[1].split(",")[0].strip()
    lines = text.split(f"\n{body} ", 1)[1].split("\n}", 1)[0].splitlines()
    assert [line for line in lines if f"{full}{{1,0}} fusion(" in line], "loop body not found"
    assert not [line for line in lines if f"{full}{{1,0}} copy(" in line]


def test_split_step_rule_follows_the_gpu_measurements():
    # XLA:CPU always takes the split step; XLA:GPU only where an H100 measured it faster (docs/benchmarks.md,
    # "On a GPU"): order >= 6 (reach >= 5) on grids of 2^20 points or more.
    from sciax.pde.waves._leapfrog import _split_pays

    assert all(_split_pays("cpu", reach, points) for reach in (1, 3, 7) for points in (300**2, 2000**2))
    measured = {  # (reach, points): split step faster on the H100
        (7, 2000**2): True,  # order 8: 42.1 -> 12.7 ms
        (5, 2000**2): True,  # order 6: 20.2 -> 11.2 ms
        (7, 200**3): True,  # 139 -> 44.4 ms
        (3, 2000**2): False,  # order 4: 8.3 ms padded, 9.5 ms split
        (1, 2000**2): False,  # order 2: 5.2 ms padded, 7.4 ms split
        (7, 300**2): False,  # launch-bound: 10.8 ms padded, 21.9 ms split
    }
    for (reach, points), faster in measured.items():
        assert _split_pays("gpu", reach, points) is faster, (reach, points)


def test_in_place_rule_follows_the_cpu_measurements(monkeypatch):
    # On several CPU cores the step is placed in a new buffer (which XLA:CPU splits over threads) only
    # where that measured faster on 2 cores on both jax stacks (docs/benchmarks.md, session 20), with AVX-512;
    # without it, in place (its interior computed apart) measured faster everywhere (session 48).
    from sciax.pde.waves import _leapfrog as leapfrog
    from sciax.pde.waves._leapfrog import _in_place_pays

    monkeypatch.setattr(leapfrog, "_masked_loads_emulated", lambda: True)
    for reach, points in ((7, 2000**2), (5, 2000**2), (7, 200**3)):  # 0.64 / 0.56 / 2.20 -> 0.31 / 0.31 / 1.26 s
        assert _in_place_pays("cpu", reach, points, 2), (reach, points)
    monkeypatch.setattr(leapfrog, "_masked_loads_emulated", lambda: False)

    measured = {  # (reach, points): in place as fast or faster on 2 cores
        (7, 2000**2): False,  # order 8: 2.18 -> 1.67 s (jax 0.10.2), 2.06 -> 1.55 s (0.12.0.1)
        (5, 2000**2): False,  # order 6: 1.51 -> 1.28 s, 1.67 -> 1.22 s
        (7, 200**3): False,  # 8.7 -> 7.5 s, 10.5 -> 8.1 s
        (3, 2000**2): True,  # order 4: 1.3x slower out of place on both
        (1, 2000**2): True,  # order 2: faster out of place on 0.10.2 only
        (7, 1000**2): True,  # even
        (7, 300**2): True,  # slower out of place at every order
    }
    for (reach, points), in_place in measured.items():
        assert _in_place_pays("cpu", reach, points, 2) is in_place, (reach, points)
        assert _in_place_pays("cpu", reach, points, 1), "one core: always in place"
        assert _in_place_pays("gpu", reach, points, 16), "the GPU measurements were taken in place"


def test_leapfrog_loop_out_of_place_equals_in_place(monkeypatch):
    # The three loops of the one-pass route (a spare buffer written in place, the field two steps back
    # written in place, or a new buffer per step in the spare's place) give the same fields (float64, order 8).
    import sciax.pde.waves._leapfrog as leapfrog

    model, y0, params = _order8_case(seed=3)
    # On this small grid AcousticWave would take its padded-state step (`test_acoustic_padded_step.py`).
    monkeypatch.setattr(W.AcousticWave, "padded_step_applies", lambda self: False)
    assert not leapfrog._padded(model, None)
    ts = np.array([0, 7, 50]) * 5e-4
    fields = []
    # A different `checkpoint` per variant (no effect on the forward run) keeps simulate's cached program apart.
    # The in-place loops also with their interior computed apart and copied into place (`_apart_interior`).
    variants = ((True, False, None, False), (True, True, 64, False), (False, False, 32, False))
    variants += ((True, False, 16, True), (True, True, 8, True))
    for in_place, over_prev, checkpoint, apart in variants:
        monkeypatch.setattr(leapfrog, "_in_place_pays", lambda *a, v=in_place: v)
        monkeypatch.setattr(leapfrog, "_BARRIERS_HOLD", over_prev)
        monkeypatch.setattr(leapfrog, "_apart_interior", lambda m, v=apart: v)
        method = W.Leapfrog(5e-4, checkpoint=checkpoint)
        start = method.init(model, y0, method.prepare(model, params))
        assert (method.loop_state(model, start)[0].spare is None) is over_prev
        assert leapfrog._overwrites_prev(model) is over_prev
        fields.append(sciax.simulate(model, y0, ts, params, method=method, save="p").ys["p"])
    scale = float(jnp.max(jnp.abs(fields[0])))
    assert scale > 0
    for other in fields[1:]:
        assert float(jnp.max(jnp.abs(fields[0] - other))) <= 1e-13 * scale


def test_apart_interior_rule_follows_the_cpu_measurements(monkeypatch):
    # An in-place step computes its interior apart (then copies it into place) only on XLA:CPU without AVX-512,
    # where that measured faster (float32, one core, jax 0.12.0.1, AMD EPYC with AVX2; docs/benchmarks.md,
    # session 48). With AVX-512 (AMD EPYC Zen 4, session 49) apart was slower: one core, 100 steps, 2000^2 order 8
    # 1.20 -> 1.30 s, 200^3 order 8 3.49 -> 3.98 s. On an AMD EPYC Zen 3 (AVX2) every row below held too
    # (docs/benchmarks.md, session 50).
    from sciax.pde.waves import _leapfrog as leapfrog

    measured = {  # (ndim, reach, points): apart faster
        (2, 7, 2000**2): True,  # order 8: 1.22 -> 0.50 s (20 steps)
        (2, 5, 2000**2): True,  # order 6: 1.03 -> 0.45 s
        (3, 7, 200**3): True,  # 4.23 -> 2.12 s
        (3, 3, 200**3): True,  # order 4: 1.53 -> 0.98 s (10 steps)
        (3, 1, 200**3): True,  # order 2: 1.09 -> 0.47 s
        (2, 1, 2000**2): False,  # order 2: 0.77 -> 1.04 s (100 steps)
        (2, 3, 2000**2): False,  # order 4: 0.63 -> 0.74 s (40 steps)
        (2, 7, 1400**2): False,  # 0.42 -> 0.47 s
        (2, 7, 600**2): False,  # 0.31 -> 0.40 s
        (3, 7, 100**3): False,  # 0.49 -> 0.51 s
    }
    for emulated in (True, False):
        monkeypatch.setattr(leapfrog, "_masked_loads_emulated", lambda v=emulated: v)
        for (ndim, reach, points), apart in measured.items():
            assert leapfrog._apart_interior_pays("cpu", ndim, reach, points) is (apart and emulated), (ndim, reach)
            assert not leapfrog._apart_interior_pays("gpu", ndim, reach, points)


@pytest.mark.parametrize(
    "text, emulated",
    [
        ("processor : 0\nflags : fpu sse2 avx fma avx2 bmi2\n", True),
        ("flags : fpu avx2 avx512f avx512bw\n", False),
        ("flags : fpu sse2 sse4_2\n", False),  # no AVX2: not measured, the rule stays off
        ("Features : fp asimd sve\n", False),  # aarch64: no x86 flags line
    ],
)
def test_masked_loads_emulated_reads_the_cpu_flags(tmp_path, text, emulated):
    from sciax.pde.waves._leapfrog import _masked_loads_emulated

    path = tmp_path / "cpuinfo"
    path.write_text(text)
    assert _masked_loads_emulated(str(path)) is emulated
    assert _masked_loads_emulated(str(tmp_path / "missing")) is False


def test_wide_vector_rule_follows_the_cpu_measurements():
    # 512-bit vectors are asked of XLA:CPU only where they measured faster (float32, 100 steps, one core and
    # both cores, jax 0.12.0.1 and 0.10.2; docs/benchmarks.md, session 42).
    from sciax.pde.waves._leapfrog import _wide_vectors_pay

    measured = {  # (reach, points): faster with 512-bit vectors
        (7, 2000**2): True,  # order 8: one core 1.13-1.22 -> 1.00-1.13 s, both cores 0.80 -> 0.72 s
        (7, 200**3): True,  # one core 5.25 -> 5.15 s, both cores 3.23 -> 3.05 s
        (7, 1000**2): False,  # even
        (7, 600**2): False,  # even
        (7, 300**2): False,  # one core 6 % slower
        (5, 2000**2): False,  # order 6: even
        (3, 2000**2): False,  # order 4: even
        (1, 2000**2): False,  # order 2: even
    }
    for (reach, points), faster in measured.items():
        assert _wide_vectors_pay("cpu", reach, points) is faster, (reach, points)
        assert not _wide_vectors_pay("gpu", reach, points), "a CPU code-generation option"


def test_compiler_options_name_what_simulate_compiles_with():
    method = W.Leapfrog(1e-4)
    big = W.Grid((2048, 2048), (1.0, 1.0))
    wide = {"xla_cpu_prefer_vector_width": 512} if jax.default_backend() == "cpu" else {}
    assert sciax.compiler_options(W.AcousticWave(big, f0=1.0, order=8), method) == wide
    assert sciax.compiler_options(W.AcousticWave(big, f0=1.0, order=4), method) == {}
    assert sciax.compiler_options(W.AcousticWave(W.Grid((64, 64), (1.0, 1.0)), f0=1.0, order=8), method) == {}
    assert sciax.compiler_options(sciax.ode.ODE(lambda t, y, p: -y)) == {}  # its default method asks for none
    with pytest.raises(TypeError, match="compiler_options: model must be a sciax.AbstractModel, got str"):
        sciax.compiler_options("model", method)


def test_simulate_compiles_with_the_methods_options(monkeypatch):
    # The options reach XLA (an unknown one is refused by the compiler, naming it), and 512-bit vectors, forced on
    # a small grid, give the same fields as the default: simulate alone, under vmap or grad, inside a jit (float64).
    import sciax.pde.waves._leapfrog as leapfrog

    model, y0, params = _order8_case(seed=5)
    ts, method = np.array([0, 9, 60]) * 5e-4, W.Leapfrog(5e-4)

    def run(params):
        return sciax.simulate(model, y0, ts, params, method=method).ys["p"]

    def grad(params):  # reverse mode traces the run: on jax 0.10.2 a nested jit with options was refused there
        return jax.grad(lambda c: run({**params, "c": c})[-1].sum())(params["c"])

    plain, plain_grad = run(params), grad(params)
    monkeypatch.setattr(leapfrog, "_wide_vectors_pay", lambda *a: True)
    options = sciax.compiler_options(model, method)
    assert options == {"xla_cpu_prefer_vector_width": 512}
    scale = float(jnp.max(jnp.abs(plain)))
    assert scale > 0
    pair = jax.tree_util.tree_map(lambda a: jnp.stack([a, a]), params)
    runs = [run(params), jax.jit(run, compiler_options=options)(params), jax.jit(run)(params), jax.vmap(run)(pair)[1]]
    for wide in runs:  # on its own, jitted with the options or without them (inside a jit, simulate's are dropped)
        np.testing.assert_allclose(wide, plain, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(grad(params), plain_grad, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(plain_grad))))
    monkeypatch.setattr(W.Leapfrog, "compiler_options", lambda self, model: {"xla_no_such_option_sciax": 1})
    with pytest.raises(Exception, match="xla_no_such_option_sciax"):
        run(params)


def _order8_case(seed: int, n: int = 40):
    """An order-8 wave on an `n x n` grid at rest, a random velocity and an off-centre source (float64)."""
    model = W.AcousticWave(W.Grid((n, n), 5.0 * n), f0=25.0, bc=W.Neumann(), order=8)
    rng = np.random.default_rng(seed)
    y0 = {"p": jnp.zeros((n, n)), "v": jnp.zeros((n, n))}
    params = {"c": jnp.asarray(1500 + 500 * rng.random((n, n))), "source": jnp.asarray((n // 2, n // 3))}
    return model, y0, params


def test_apart_interior_reaches_both_in_place_routes(monkeypatch):
    # The equality tests above patch `_apart_interior` and compare fields, which would not notice a route that
    # stopped asking it: here each in-place route's traced program gains its barrier where the rule holds.
    import sciax.pde.waves._acoustic as acoustic
    import sciax.pde.waves._leapfrog as leapfrog

    model, y0, params = _order8_case(seed=5)
    ts = np.array([0, 4]) * 5e-4
    monkeypatch.setattr(leapfrog, "_in_place_pays", lambda *a: True)
    checkpoints = iter(range(100, 110))  # one per program: simulate's cached programs stay apart

    def barriers(padded: bool, apart: bool) -> int:
        monkeypatch.setattr(W.AcousticWave, "padded_step_applies", lambda self: padded)
        monkeypatch.setattr(leapfrog, "_apart_interior", lambda m: apart)
        monkeypatch.setattr(acoustic, "_apart_interior", lambda m: apart)
        assert leapfrog._padded(model, None) is padded
        method = W.Leapfrog(5e-4, checkpoint=next(checkpoints))
        run = jax.jit(lambda p: sciax.simulate(model, y0, ts, p, method=method, save="p").ys["p"])
        return run.lower(params).as_text().count("optimization_barrier")

    for padded in (False, True):
        assert barriers(padded, True) > barriers(padded, False), f"padded={padded}"


def test_in_place_without_avx512_only_where_the_interior_is_computed_apart(monkeypatch):
    # Without AVX-512, several cores write in place only because the apart interior pass is the one XLA:CPU splits
    # over them; a fused in-place write runs on one core. So wherever that CPU turns the in-place rule on, the
    # apart rule must hold too (the two rules live side by side in `_leapfrog.py`).
    import sciax.pde.waves._leapfrog as leapfrog

    widened = 0
    for ndim, reach, e, threads in itertools.product((2, 3), (1, 3, 5, 7), (17, 20, 21, 23), (2, 16)):
        points = 2**e
        monkeypatch.setattr(leapfrog, "_masked_loads_emulated", lambda: False)
        before = leapfrog._in_place_pays("cpu", reach, points, threads)
        monkeypatch.setattr(leapfrog, "_masked_loads_emulated", lambda: True)
        if leapfrog._in_place_pays("cpu", reach, points, threads) and not before:
            widened += 1
            assert leapfrog._apart_interior_pays("cpu", ndim, reach, points), (ndim, reach, points, threads)
    assert widened > 0
