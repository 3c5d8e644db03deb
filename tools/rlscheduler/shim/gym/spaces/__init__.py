from gymnasium.spaces import *  # noqa: F403
from gymnasium.spaces import Box, Discrete  # noqa: F401
