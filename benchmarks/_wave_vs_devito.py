"""The sciax-vs-Devito part of `fd_wave.py`: each side in its own process, all cores and one core.

A case is `"ndim,n,steps,order"`: an `n^ndim` grid, `steps` leapfrog steps, stencil order `order`, float32,
a Ricker source at the centre, random velocity (1500-2000) and density (1000-1800), only the last pressure
kept. sciax runs `AcousticWave(bc=ZeroPadding(), density_average="harmonic")` + `Leapfrog`; Devito the same
variable-density scheme (`_devito_wave.py`: `b = 1/rho` averaged to the half points), whose halos hold zeros
(until session 47 sciax ran `bc=Neumann()`, whose mirrored ghosts it wrote at every step). Prints
`sciax_<case>_<cores>_s`, `devito_<case>_<cores>_s` and `sciax_over_devito_<case>_<cores>` (a time ratio: below 1
sciax is faster), and the machine load; once per case `sciax_devito_max_rel_diff_<case>`, the largest difference
of the two last pressures over the largest pressure (with fewer steps where the wave would reach an edge,
where the two differ at the low sides: Devito computes the flux through the face below the first point from
the zero halo inline, sciax's `ZeroPadding` holds it at zero, a ghost face). On all cores
of a multi-core machine also `sciax_sharded_<case>_all_cores_s` and `sciax_sharded_over_devito_<case>_all_cores`:
the grid sharded along its first axis over one XLA CPU device per core (`sciax.parallel.shard`, slab mesh).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np

H, DTIME, F0 = 5.0, 5e-4, 25.0
FULL = ["2,300,1000,2", "2,300,1000,4", "2,300,1000,8", "2,2000,100,2", "2,2000,100,4", "2,2000,100,8", "3,200,100,8"]
QUICK = ["2,100,200,2", "2,100,200,8", "2,400,20,2", "2,400,20,8", "3,48,20,8"]
ONE_CORE_XLA = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def _case_setup(case):
    """The jitted last-pressure run of one case and its parameters (the same fields as _devito_wave.py)."""
    import jax
    import jax.numpy as jnp

    import sciax

    ndim, n, steps, order = (int(x) for x in case.split(","))
    shape = (n,) * ndim
    rng = np.random.default_rng(0)
    c = (1500 + 500 * rng.random(shape)).astype(np.float32)
    rho = (1000 + 800 * rng.random(shape)).astype(np.float32)
    grid = sciax.pde.Grid(shape, (n * H,) * ndim)
    # Devito's edges: its halos hold zeros, which its operator never writes (neither does sciax's padded step).
    model = sciax.pde.AcousticWave(grid, f0=F0, bc=sciax.pde.ZeroPadding(), order=order, density_average="harmonic")
    if jax.device_count() > 1:  # `--host-devices`: the grid cut along its first axis, one block per CPU device
        model = sciax.parallel.shard(model, sciax.parallel.make_mesh("slab"))
    y0 = {"p": jnp.zeros(shape, jnp.float32), "v": jnp.zeros(shape, jnp.float32)}
    params = {"c": jnp.asarray(c), "rho": jnp.asarray(rho), "source": jnp.asarray((n // 2,) * ndim)}
    method = sciax.pde.Leapfrog(DTIME, checkpoint=None)
    ts = np.array([0, steps]) * DTIME

    def last(params):
        return sciax.simulate(model, y0, ts, params, method=method, save="p").ys["p"][-1]

    # The options `simulate` would compile with on its own (512-bit vectors at order 8 on large CPU grids): XLA
    # takes them from the outermost jit, which is this one.
    return jax.jit(last, compiler_options=sciax.compiler_options(model, method)), params


def _best_time(run, params, repeats: int) -> float:
    from _device import best_time  # imports jax: only once the caller has configured it

    return best_time(run, params, repeats=repeats)


def run_sciax_cases(cases, repeats: int = 3, save: str | None = None) -> None:
    """Time each case with sciax (best of `repeats` after a compiling run) and print `sciax_<case>_s`; with
    `save`, write the (one) case's last pressure to that .npy file."""
    for case in cases:
        run, params = _case_setup(case)
        print(f"sciax_s: {_best_time(run, params, 1 if save else repeats):.4f}", flush=True)
        if save:
            np.save(save, np.asarray(run(params)))


def _agreement(case, sciax_cmd, devito_cmd, env) -> None:
    """Print the largest difference between sciax's and Devito's last pressures over the largest pressure (fewer
    steps where the fastest wave, 2000 m/s, would come near an edge: `steps_before_edge`)."""
    from _agreement import max_rel_diff, steps_before_edge

    ndim, n, steps, order = (int(x) for x in case.split(","))
    steps = steps_before_edge(steps, n, H, 2000, DTIME)
    case, name = f"{ndim},{n},{steps},{order}", f"{ndim}d_{n}_{steps}steps_o{order}"
    diff = max_rel_diff(
        lambda path: _seconds(sciax_cmd + ["--sciax-cases", case, "--save-last", path], env),
        lambda path: _seconds(devito_cmd + [case, "--repeats", "1", "--save-last", path], env),
    )
    print(f"sciax_devito_max_rel_diff_{name}: {diff:.2e}", flush=True)


def gpu_figures(quick: bool) -> None:
    """Each comparison case with sciax on the default device (a GPU on a GPU session): time and the fraction of
    the device's streaming bandwidth. A step must at least read p, p_prev, kappa and the buoyancy 1/rho and
    write p_next: 5 fields of float32."""
    import jax

    device = jax.devices()[0]
    from _device import device_copy_bandwidth

    bandwidth = device_copy_bandwidth()
    print(f"# sciax on {device.platform} ({device.device_kind}), float32, only the last pressure kept")
    print(f"device_copy_bandwidth_GBps: {bandwidth / 1e9:.1f}")
    for case in QUICK if quick else FULL:
        ndim, n, steps, order = (int(x) for x in case.split(","))
        seconds = _best_time(*_case_setup(case), repeats=5)
        traffic = 5 * n**ndim * 4 * steps
        name = f"{ndim}d_{n}_{steps}steps_o{order}"
        print(f"{device.platform}_sciax_{name}_s: {seconds:.4f}")
        print(f"{device.platform}_sciax_{name}_Gpoint_steps_per_s: {n**ndim * steps / seconds / 1e9:.2f}")
        print(f"{device.platform}_bandwidth_fraction_{name}: {traffic / seconds / bandwidth:.3f}", flush=True)


def _devito_python(given: str | None) -> str | None:
    if given:
        return given
    try:
        import devito  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def _seconds(cmd, env) -> float:
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{cmd[:3]} failed:\n{out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1].split(":")[1])


def _per_step(case, name, times, prefix, sciax_cmd, devito_python, here, env) -> None:
    """Time `case` at 3x its steps on both sides; print each side's time per step and fixed cost per call, and
    sciax's time with `REUSED_PAGES`."""
    ndim, n, steps, order = (int(x) for x in case.split(","))
    longer = f"{ndim},{n},{3 * steps},{order}"
    t3_sciax = _seconds(prefix + sciax_cmd + ["--sciax-cases", longer], env)
    t3_devito = _seconds(prefix + [devito_python, os.path.join(here, "_devito_wave.py"), longer], env)
    per_step = []
    for side, t1, t3 in (("sciax", times[0], t3_sciax), ("devito", times[1], t3_devito)):
        step = (t3 - t1) / (2 * steps)
        per_step.append(step)
        print(f"{side}_{name}_x3_s: {t3:.4f}")
        print(f"{side}_per_step_ms_{name}: {1e3 * step:.3f}")
        print(f"{side}_fixed_s_{name}: {t1 - steps * step:.4f}")
    print(f"sciax_over_devito_per_step_{name}: {per_step[0] / per_step[1]:.2f}", flush=True)
    # The same sciax run with glibc keeping freed memory for the next call: the buffers XLA allocates per call
    # are then no fresh pages (their page faults are part of sciax's fixed cost; docs/pde.md).
    t1_reused = _seconds(prefix + sciax_cmd + ["--sciax-cases", case], dict(env, GLIBC_TUNABLES=REUSED_PAGES))
    print(f"sciax_reused_pages_{name}_s: {t1_reused:.4f}")
    print(f"sciax_reused_pages_over_devito_{name}: {t1_reused / times[1]:.2f}", flush=True)


# glibc's malloc never returns freed memory to the kernel (no mmap for large blocks, no trimming).
REUSED_PAGES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295"


def _pages() -> str:
    """Transparent huge pages and glibc's malloc tunables, which both sides inherit: with THP on `madvise`,
    `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` gives XLA's buffers huge pages (NumPy's, thus Devito's, have them)."""
    path = "/sys/kernel/mm/transparent_hugepage/enabled"
    thp = open(path).read().strip() if os.path.exists(path) else "unknown"
    return f"transparent huge pages: {thp}; GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def compare_with_devito(
    fd_wave: str, quick: bool, devito_python: str | None, cases=None, which="both", per_step: bool = False
) -> None:
    """Run every case with sciax and with Devito, alternating, on all cores and/or pinned to core 0. With `per_step`
    each side (sciax on one device) also runs 3x the steps: the difference gives its time per step, and the rest of
    its time a fixed cost per call (sciax: coefficients, start, buffers; Devito's timed `apply` has none)."""
    python = _devito_python(devito_python)
    if python is None:
        print("# Devito comparison skipped: devito not importable (pass --devito-python)")
        return
    here = os.path.dirname(os.path.abspath(fd_wave))
    cases = cases or (QUICK if quick else FULL)
    cores = os.cpu_count()
    pin = shutil.which("taskset")
    labels = {"all": ("all_cores",), "1": ("1core",), "both": ("all_cores", "1core")}[which]
    for label in labels:
        one = label == "1core"
        if one and pin is None:
            print("# one-core comparison skipped: taskset not found")
            continue
        env = dict(os.environ, OMP_NUM_THREADS="1" if one else str(cores), DEVITO_LANGUAGE="openmp")
        env["DEVITO_LOGGING"] = "ERROR"
        if one:
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + ONE_CORE_XLA).strip()
        prefix = ["taskset", "-c", "0"] if one else []
        print(f"# sciax vs Devito, float32, {label} ({cores} cores on the machine), load average before: {_load()}")
        print(f"# {_pages()}")
        for case in cases:
            ndim, n, steps, order = case.split(",")
            name = f"{ndim}d_{n}_{steps}steps_o{order}_{label}"
            t_sciax = _seconds(prefix + [sys.executable, fd_wave, "--sciax-cases", case], env)
            sharded = not one and cores > 1 and int(n) % cores == 0
            if sharded:
                cmd = [sys.executable, fd_wave, "--sciax-cases", case, "--host-devices", str(cores)]
                t_sharded = _seconds(cmd, env)
            t_devito = _seconds(prefix + [python, os.path.join(here, "_devito_wave.py"), case], env)
            print(f"sciax_{name}_s: {t_sciax:.4f}")
            if sharded:
                print(f"sciax_sharded_{name}_s: {t_sharded:.4f}")
            print(f"devito_{name}_s: {t_devito:.4f}")
            print(f"sciax_over_devito_{name}: {t_sciax / t_devito:.2f}", flush=True)
            if sharded:
                print(f"sciax_sharded_over_devito_{name}: {t_sharded / t_devito:.2f}", flush=True)
            if per_step:
                _per_step(case, name, (t_sciax, t_devito), prefix, [sys.executable, fd_wave], python, here, env)
            if label == labels[0]:
                devito_cmd = [python, os.path.join(here, "_devito_wave.py")]
                _agreement(case, [sys.executable, fd_wave], devito_cmd, env)
        print(f"# load average after: {_load()}")
