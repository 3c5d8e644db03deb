"""The seed papers' published results regenerated beside the paper, one module per
paper (``parsched reproduce MODEL``): :mod:`~parsched.reproduce.pools` (seed 000),
:mod:`~parsched.reproduce.gang` (seed 001), :mod:`~parsched.reproduce.fcs` and
:mod:`~parsched.reproduce.desktop` (seed 002, in simulation and on this machine),
:mod:`~parsched.reproduce.cosched` (seed 003), :mod:`~parsched.reproduce.regions`
(seed 004) and :mod:`~parsched.reproduce.batch` (batch scheduling on the shared traces).
"""
