"""Full-waveform-inversion gradient cost with `sciax.pde.seismic`: one shot on 500 x 500 points,
2,000 steps (quick: 150 x 150, 300 steps), CPML, float32, seismograms only.

Run: python benchmarks/fwi.py [--quick] [--checkpoint K [K ...]] [--rounds R]
Prints `name: value` lines (headers start with '#'): forward and gradient times (after a warm-up, the
forward and the gradients run alternately for `--rounds` rounds, so load drift on a shared machine
hits them alike; best and median of the rounds; the gradient by the adjoint-state method of
`model_shots` for each block size `--checkpoint`, and JAX's autodiff of the same loop for reference),
their ratios, XLA's temporary-buffer size of each compiled gradient and the process's peak resident
memory. Reports numbers only; asserts nothing.
"""

import argparse
import os
import resource
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import sciax

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
parser.add_argument("--checkpoint", type=int, nargs="+", default=[32, 64], help="steps per recomputed block")
parser.add_argument("--rounds", type=int, default=5, help="alternating timing rounds")
parser.add_argument("--no-autodiff", action="store_true", help="skip the reference autodiff gradient")
args = parser.parse_args()

seismic = sciax.pde.seismic
N, STEPS = (150, 300) if args.quick else (500, 2000)
H, DT, F0, WIDTH = 10.0, 1e-3, 15.0, 20
grid = sciax.pde.Grid((N, N), (N * H, N * H))
survey = seismic.Survey(
    grid, [(WIDTH + 2, N // 2)], [(WIDTH + 2, j) for j in range(WIDTH, N - WIDTH, 2)], f0=F0, bc=sciax.pde.CPML(WIDTH)
)
wavelet = seismic.Wavelet.ricker(F0, DT, STEPS)
depth = np.arange(N)[:, None] * np.ones((1, N))
c_true = jnp.asarray(2000.0 + 1.0 * depth * H / 2, jnp.float32)
c0 = jnp.asarray(2000.0 + 0.9 * depth * H / 2, jnp.float32)


def make(method, checkpoint):
    model = lambda c: seismic.model_shots(survey, c, wavelet, DT, checkpoint=checkpoint, gradient=method)  # noqa: E731
    return eqx.filter_jit(model), jax.jit(jax.grad(lambda c: seismic.l2_misfit(model(c), observed)))


forward, _ = make("adjoint", args.checkpoint[0])
observed = forward(c_true)
gradients = {k: make("adjoint", k)[1] for k in args.checkpoint}
functions = {"forward": forward} | {f"gradient_k{k}": g for k, g in gradients.items()}
if not args.no_autodiff:
    forward_autodiff, autodiff = make("autodiff", args.checkpoint[0])
    functions |= {"forward_autodiff_path": forward_autodiff, "autodiff": autodiff}


def interleaved(fns, rounds):
    """Best and median seconds of each function, run alternately after a warm-up."""
    for fn in fns.values():
        jax.block_until_ready(fn(c0))
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            jax.block_until_ready(fn(c0))
            times[name].append(time.perf_counter() - start)
    return {name: (min(t), float(np.median(t))) for name, t in times.items()}


print(f"# FWI gradient, 1 shot, {N}x{N}, {STEPS} steps, float32, {args.rounds} alternating rounds")
print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
t = interleaved(functions, args.rounds)
t_forward, t_forward_median = t["forward"]
print(f"fwi_forward_s: {t_forward:.3f}")
print(f"fwi_forward_median_s: {t_forward_median:.3f}")
for k in args.checkpoint:
    best, median = t[f"gradient_k{k}"]
    print(f"fwi_gradient_checkpoint{k}_s: {best:.3f}")
    print(f"fwi_gradient_over_forward_checkpoint{k}: {best / t_forward:.2f}")
    print(f"fwi_gradient_over_forward_median_checkpoint{k}: {median / t_forward_median:.2f}")
if not args.no_autodiff:
    gradient = gradients[args.checkpoint[0]]
    t_forward_autodiff, t_autodiff = t["forward_autodiff_path"][0], t["autodiff"][0]
    difference = jnp.max(jnp.abs(autodiff(c0) - gradient(c0))) / jnp.max(jnp.abs(autodiff(c0)))
    # The autodiff path's forward is `sciax.simulate` with `Leapfrog`; the ratio against the faster
    # of the two forwards is what a user pays for a gradient over a plain forward run.
    fastest = min(t_forward, t_forward_autodiff)
    print(f"fwi_forward_autodiff_path_s: {t_forward_autodiff:.3f}")
    print(f"fwi_gradient_over_fastest_forward: {t[f'gradient_k{args.checkpoint[0]}'][0] / fastest:.2f}")
    print(f"fwi_autodiff_gradient_s: {t_autodiff:.3f}")
    print(f"fwi_autodiff_over_forward: {t_autodiff / t_forward:.2f}")
    print(f"fwi_adjoint_vs_autodiff_max_rel_difference: {float(difference):.2e}")
print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
for k, gradient in gradients.items():
    try:
        temp = gradient.lower(c0).compile().memory_analysis().temp_size_in_bytes
        print(f"fwi_gradient_temp_GB_checkpoint{k}: {temp / 1e9:.3f}")
    except Exception as error:  # noqa: BLE001  (memory_analysis is backend-dependent)
        print(f"# no memory analysis: {type(error).__name__}")
print(f"fwi_field_GB: {N * N * 4 / 1e9:.4f}")
print(f"peak_rss_GB: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.3f}")
