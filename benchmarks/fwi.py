"""Full-waveform-inversion gradient cost with `sciax.pde.seismic`: one shot on 500 x 500 points,
2,000 steps (quick: 150 x 150, 300 steps), CPML, float32, seismograms only.

Run: python benchmarks/fwi.py [--quick] [--checkpoint K]
Prints `name: value` lines (headers start with '#'): forward and gradient times (best of 3 after a
warm-up; the gradient by the adjoint-state method of `model_shots`, and JAX's autodiff of the same
loop for reference), their ratios, XLA's temporary-buffer size of the compiled gradient and the process's peak
resident memory. Reports numbers only; asserts nothing.
"""

import argparse
import math
import resource
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import sciax

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
parser.add_argument("--checkpoint", type=int, default=32, help="steps per recomputed block")
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


def make(method):
    model = lambda c: seismic.model_shots(survey, c, wavelet, DT, checkpoint=args.checkpoint, gradient=method)  # noqa: E731
    return eqx.filter_jit(model), jax.jit(jax.grad(lambda c: seismic.l2_misfit(model(c), observed)))


forward, gradient = make("adjoint")
observed = forward(c_true)


def best_of(fn, x, repeats=3):
    jax.block_until_ready(fn(x))
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(x))
        best = min(best, time.perf_counter() - start)
    return best


print(f"# FWI gradient, 1 shot, {N}x{N}, {STEPS} steps, checkpoint every {args.checkpoint} steps, float32")
t_forward = best_of(forward, c0)
t_gradient = best_of(gradient, c0)
print(f"fwi_forward_s: {t_forward:.3f}")
print(f"fwi_gradient_s: {t_gradient:.3f}")
print(f"fwi_gradient_over_forward: {t_gradient / t_forward:.2f}")
if not args.no_autodiff:
    forward_autodiff, autodiff = make("autodiff")
    t_forward_autodiff = best_of(forward_autodiff, c0)
    t_autodiff = best_of(autodiff, c0)
    difference = jnp.max(jnp.abs(autodiff(c0) - gradient(c0))) / jnp.max(jnp.abs(autodiff(c0)))
    # The autodiff path's forward is `sciax.simulate` with `Leapfrog`; the ratio against the faster
    # of the two forwards is what a user pays for a gradient over a plain forward run.
    fastest = min(t_forward, t_forward_autodiff)
    print(f"fwi_forward_autodiff_path_s: {t_forward_autodiff:.3f}")
    print(f"fwi_gradient_over_fastest_forward: {t_gradient / fastest:.2f}")
    print(f"fwi_autodiff_gradient_s: {t_autodiff:.3f}")
    print(f"fwi_autodiff_over_forward: {t_autodiff / t_forward:.2f}")
    print(f"fwi_adjoint_vs_autodiff_max_rel_difference: {float(difference):.2e}")
try:
    temp = gradient.lower(c0).compile().memory_analysis().temp_size_in_bytes
    print(f"fwi_gradient_temp_GB: {temp / 1e9:.3f}")
except Exception as error:  # noqa: BLE001  (memory_analysis is backend-dependent)
    print(f"# no memory analysis: {type(error).__name__}")
print(f"fwi_field_GB: {N * N * 4 / 1e9:.4f}")
print(f"peak_rss_GB: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.3f}")
