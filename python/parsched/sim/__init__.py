"""The models' Python APIs: running the simulators and reading their results.

* :mod:`~parsched.sim.api` — :func:`~parsched.simulate` (processor pools, seed 000;
  any config), the barrier machine (seed 001), :func:`~parsched.sweep`.
* :mod:`~parsched.sim.batch` — batch scheduling on traces (SWF, Lublin-Feitelson).
* :mod:`~parsched.sim.cosched` — coscheduling on a network of workstations (seed 003).
* :mod:`~parsched.sim.fcs` — flexible coscheduling on the parallel desktop (seed 002).
* :mod:`~parsched.sim.regions` — cache-region scheduling (seed 004).
* :mod:`~parsched.sim.generate` — the Lublin-Feitelson generator (explicit job
  streams: :mod:`parsched.config.arrivals`).
* :mod:`~parsched.sim.policies` — pool-selection rules written in Python.
* :mod:`~parsched.sim.sweep_spec` — sweeps from a TOML spec file.

The usual entry points are re-exported by :mod:`parsched` itself.
"""
