"""A stand-in for gstaichi's Kernel: __call__, materialize, launch_kernel, with their parameters."""
__version__ = (0, 0, 1)
