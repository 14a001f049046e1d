"""Probabilistic models: NumPyro inference around any simulation, sensitivity analysis. (Planned.)"""
