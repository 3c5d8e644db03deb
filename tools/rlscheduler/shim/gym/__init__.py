"""Tiny local stand-in for old OpenAI `gym`, re-exporting gymnasium's Env/spaces.
Only what RLScheduler's HPCSimPickJobs.py touches: gym.Env, gym.spaces(.Box/.Discrete), gym.utils.seeding."""
from gymnasium import Env  # noqa: F401

from . import spaces, utils  # noqa: F401
