"""A stand-in for the part of PyTorch gpujit's hook watches in Inductor's autotuning:
torch._inductor.runtime.triton_heuristics.CachingAutotuner, whose autotune_to_one_config
benchmarks a kernel's configurations at its first call. No GPU: a benchmark sleeps."""
__version__ = "2.11.0+fake"
