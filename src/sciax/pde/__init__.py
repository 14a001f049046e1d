"""Partial differential equations: grids, boundary conditions, stencils, spectral operators,
time steppers and an equation catalogue. (Planned; see the project's issues.)"""
