"""The classic variable-density acoustic scheme in plain numpy (independent of sciax), and the order-8 staggered
weights of Fornberg, for tests and benchmarks."""

import math

import numpy as np


def reference_wave(c, rho, dx, dy, dt, n_steps, f0, src, keep=False, harmonic=False):
    """Run the reference scheme; returns the final pressure (and every wavefield if `keep`). The density at
    a half point is the mean of its two neighbours', or with `harmonic` their harmonic mean (the inverse
    of the mean of `1 / rho`)."""
    kappa = rho * c**2
    mean = (lambda a, b: 2 / (1 / a + 1 / b)) if harmonic else (lambda a, b: 0.5 * (a + b))
    rho_x = rho.copy()
    rho_x[:-1] = mean(rho[1:], rho[:-1])
    rho_y = rho.copy()
    rho_y[:, :-1] = mean(rho[:, 1:], rho[:, :-1])
    a = (math.pi * f0) ** 2
    t0 = 1.2 / f0
    p = np.zeros_like(c)
    p_prev = np.zeros_like(c)
    ax = np.zeros_like(c)
    ay = np.zeros_like(c)
    d = np.zeros_like(c)
    fields = []
    for n in range(n_steps):
        t = n * dt
        ax[:-1] = (p[1:] - p[:-1]) / (dx * rho_x[:-1])
        ax[-1] = 0
        ay[:, :-1] = (p[:, 1:] - p[:, :-1]) / (dy * rho_y[:, :-1])
        ay[:, -1] = 0
        d[:] = 0
        d[1:] += (ax[1:] - ax[:-1]) / dx
        d[:, 1:] += (ay[:, 1:] - ay[:, :-1]) / dy
        s = 1e-3 * (1 - 2 * a * (t - t0) ** 2) * math.exp(-a * (t - t0) ** 2)
        p_next = 2 * p - p_prev + dt**2 * kappa * d
        p_next[src] += dt**2 * 4 * math.pi * c[src] ** 2 * s
        p_prev, p = p, p_next
        if keep:
            fields.append(p)
    return (p, np.stack(fields)) if keep else p


# Fornberg's staggered first-derivative weights at order 8 (points +-1/2, +-3/2, +-5/2, +-7/2).
FORNBERG8 = np.array([1225 / 1024, -245 / 3072, 49 / 5120, -5 / 7168])


def shifted_sum(u, axis, hi, lo, m):
    """`sum_k w_k (u[hi + k + j] - u[lo - k + j])`, `j = 0 .. m - 1`, along `axis` (Fornberg's weights `w_k`)."""
    return sum(
        w * (np.take(u, np.arange(hi + k, hi + k + m), axis) - np.take(u, np.arange(lo - k, lo - k + m), axis))
        for k, w in enumerate(FORNBERG8)
    )
