"""Exact solutions used as references (independent of the code under test)."""

import numpy as np


def burgers_cole_hopf(x, t, nu, a=0.5, k=1.0):
    """u = -2 nu phi_x / phi with phi = 1 + a exp(-nu k^2 t) cos(k x), which solves phi_t = nu phi_xx."""
    decay = a * np.exp(-nu * k * k * t)
    phi = 1 + decay * np.cos(k * x)
    phi_x = -k * decay * np.sin(k * x)
    return -2 * nu * phi_x / phi


def kdv_soliton(x, t, c, length, x0=0.0):
    """(c/2) sech^2(sqrt(c)/2 (x - c t - x0)), centred on the nearest periodic image."""
    y = (x - c * t - x0 + length / 2) % length - length / 2
    return c / 2 / np.cosh(np.sqrt(c) / 2 * y) ** 2
