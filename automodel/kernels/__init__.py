"""Many kernels at once: one model per kernel (call path and metric) of a profile."""
