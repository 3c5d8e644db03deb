# Empty stand-in: HPCSimPickJobs.py does `import tensorflow as tf` at top level but
# only uses tf inside placeholder helpers that the environment itself never calls.
