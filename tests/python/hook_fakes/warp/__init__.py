"""A stand-in for NVIDIA Warp's Module.load and Module._compile, with their parameter names."""
__version__ = "0.0+stand-in"
