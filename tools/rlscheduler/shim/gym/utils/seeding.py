"""Old gym (2019, the commit pinned in RLScheduler's requirements.txt) returned a
numpy RandomState from seeding.np_random; HPCEnv calls .randint on it, which the
gymnasium Generator lacks. So return a RandomState (seed derivation differs from
old gym's hash_seed, so the exact windows differ, the API/behaviour does not)."""
import numpy as np


def np_random(seed=None):
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**32))
    rng = np.random.RandomState(seed)
    return rng, seed
