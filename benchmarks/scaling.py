"""Scaling of `sciax.parallel` over the devices present (8 forced CPU devices when there is no accelerator).

Prints `name: value` lines, no assertions:

- `strong_*`: a fixed 512 x 512 FD heat run (RK4, order 4) on 1, 2, 4, 8 devices: seconds and speed-up;
- `weak_*`: 256 x 256 points per device: seconds and efficiency (time on 1 / time on n);
- `sharded_1dev_over_plain`: the sharded path on a 1-device mesh over the plain path (goal <= 1.1);
- `wave4096_bytes_per_device_*`: compiled memory (arguments + outputs + temporaries) of a Leapfrog
  step loop for a 4096^2 acoustic wave field, unsharded and on 8 devices, and their ratio (goal ~ 1/8);
- `ns2d_*`: a 256^2 spectral Navier-Stokes run through the distributed FFT, 1 vs all devices;
- `wave2048x512_*_halo_every*`: a Leapfrog acoustic run on all devices with halos exchanged every step
  or, with `shard(..., halo_every=k)`, every k steps (wide halos), and the time ratio to every step.

On CPU the "devices" share the machine's cores, so the timings are a functional report rather than a
speed-up measurement; the same script runs unchanged on real GPUs.
"""

import os
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402
from sciax import parallel, pde  # noqa: E402


def best_time(fn, *args, repeats=3):
    jax.block_until_ready(fn(*args))  # compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return min(times)


def heat_run(shape, devices):
    grid = pde.Grid(shape, 1.0)
    model = pde.fd.heat(grid, bc=pde.Dirichlet(0.0), order=4)
    if devices is not None:
        model = parallel.shard(model, parallel.make_mesh("slab", devices=jax.devices()[:devices]))
    u0 = jnp.asarray(np.random.default_rng(0).random(shape), jnp.result_type(float))
    h = grid.spacing[0]
    dt = 0.05 * h * h
    ts = np.asarray([0.0, 20 * dt])
    return jax.jit(lambda u: sciax.simulate(model, u, ts, {"D": jnp.asarray(1.0)}, method=pde.RK4(dt)).ys), u0


def wave_halo_every():
    """A 2048 x 512 acoustic wave (order 4, Leapfrog, 64 steps) on all devices (slab), halos exchanged every
    step or every k steps (wide halos of k * 3 points): seconds, and the ratio to exchanging every step."""
    n = min(8, len(jax.devices()))
    grid = pde.Grid((2048, 512), (2048.0, 512.0))  # unit spacing: Leapfrog(0.1) is well inside the CFL limit
    model = pde.AcousticWave(grid, f0=5.0, bc=pde.Neumann(), order=4)
    mesh = parallel.make_mesh("slab", devices=jax.devices()[:n])
    dtype = jnp.result_type(float)
    y0 = {"p": jnp.asarray(np.random.default_rng(0).random(grid.shape), dtype), "v": jnp.zeros(grid.shape, dtype)}
    ts = np.asarray([0.0, 64 * 0.1])
    base = None
    for k in (1, 4, 8):
        m = parallel.shard(model, mesh, halo_every=k)
        t = best_time(
            jax.jit(
                lambda y, m=m: (
                    sciax.simulate(m, y, ts, {"c": jnp.asarray(1.0, dtype)}, method=pde.Leapfrog(0.1), save="p").ys
                )
            ),
            y0,
        )
        base = base or t
        print(f"wave2048x512_{n}dev_halo_every{k}_seconds: {t:.4f}")
        if k > 1:
            print(f"wave2048x512_{n}dev_halo_every{k}_over_every1: {t / base:.3f}")


def counts():
    n = len(jax.devices())
    return [d for d in (1, 2, 4, 8) if d <= n]


def main():
    print(f"platform: {jax.devices()[0].platform}")
    print(f"devices: {len(jax.devices())}")
    print(f"dtype: {jnp.result_type(float)}")
    base = None
    for d in counts():
        t = best_time(*heat_run((512, 512), d))
        base = base or t
        print(f"strong_heat512_{d}dev_seconds: {t:.4f}")
        print(f"strong_heat512_{d}dev_speedup: {base / t:.2f}")
    base = None
    for d in counts():
        t = best_time(*heat_run((256 * d, 256), d))
        base = base or t
        print(f"weak_heat256_per_dev_{d}dev_seconds: {t:.4f}")
        print(f"weak_heat256_per_dev_{d}dev_efficiency: {base / t:.2f}")
    plain = best_time(*heat_run((512, 512), None), repeats=5)
    sharded = best_time(*heat_run((512, 512), 1), repeats=5)
    print(f"plain_heat512_seconds: {plain:.4f}")
    print(f"sharded_1dev_over_plain: {sharded / plain:.3f}")

    wave_halo_every()

    grid = pde.Grid((4096, 4096), 1.0)
    model = pde.AcousticWave(grid, f0=5.0, bc=pde.Neumann(), order=4)
    y0 = {"p": jax.ShapeDtypeStruct(grid.shape, jnp.float32), "v": jax.ShapeDtypeStruct(grid.shape, jnp.float32)}
    ts = np.asarray([0.0, 4e-5], np.float32)
    mem = {}
    for label, m in (
        ("1dev", model),
        (
            f"{min(8, len(jax.devices()))}dev",
            parallel.shard(model, parallel.make_mesh("slab", devices=jax.devices()[:8])),
        ),
    ):
        # A velocity field given at run time, as in an inversion: its checks must not gather it whole.
        run = jax.jit(lambda y, c, m=m: sciax.simulate(m, y, ts, {"c": c}, method=pde.Leapfrog(1e-5), save="p").ys)
        stats = run.lower(y0, jax.ShapeDtypeStruct(grid.shape, jnp.float32)).compile().memory_analysis()
        total = stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
        # memory_analysis reports one device's program: per device for the sharded one.
        mem[label] = total
        print(f"wave4096_bytes_per_device_{label}: {total}")
    labels = list(mem)
    print(f"wave4096_memory_ratio_{labels[1]}_over_{labels[0]}: {mem[labels[1]] / mem[labels[0]]:.3f}")

    g2 = pde.Grid((256, 256), 2 * np.pi)
    ns = pde.spectral.navier_stokes_2d(g2, forcing_mode=4)
    x, y = g2.meshgrid()
    w0 = jnp.asarray(np.sin(x) * np.cos(3 * y), jnp.result_type(float))
    p = {"nu": 1e-3, "forcing": 0.1}
    ts2 = np.asarray([0.0, 0.2])
    t1 = best_time(jax.jit(lambda w: sciax.simulate(ns, w, ts2, p, method=pde.ETDRK4(dt=0.01)).ys), w0)
    n = len(jax.devices())
    sharded_ns = parallel.shard(ns, parallel.make_mesh("slab"))
    tn = best_time(jax.jit(lambda w: sciax.simulate(sharded_ns, w, ts2, p, method=pde.ETDRK4(dt=0.01)).ys), w0)
    print(f"ns2d256_plain_seconds: {t1:.4f}")
    print(f"ns2d256_{n}dev_seconds: {tn:.4f}")
    print(f"ns2d256_{n}dev_speedup: {t1 / tn:.2f}")


if __name__ == "__main__":
    main()
