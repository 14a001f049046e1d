"""Linear and nonlinear solvers for grids over lineax and optimistix. (Planned.)"""
