"""A stand-in for numba-cuda's compile entry points, with the real ones' parameter names."""
__version__ = "0.0+stand-in"
