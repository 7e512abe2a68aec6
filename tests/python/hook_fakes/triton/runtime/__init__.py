"""triton.runtime, as far as gpujit's hook looks: the autotuner."""
from . import autotuner  # noqa: F401
