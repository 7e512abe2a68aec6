"""A JAX jit function under gpujit profile: XLA compiles it itself (no NVRTC): module loads only."""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100


@jax.jit
def f(x):
    return jnp.sin(x) * 2.0 + x


x = jnp.arange(1 << 20, dtype=jnp.float32)
for _ in range(n):
    y = f(x)
y.block_until_ready()
print("calls f %d" % n)
