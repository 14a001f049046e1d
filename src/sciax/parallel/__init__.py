"""Device meshes, sharded grids, halo exchange and multi-host runs. (Planned.)"""
