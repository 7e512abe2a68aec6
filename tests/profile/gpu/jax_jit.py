"""A JAX jit function under gpujit profile: XLA compiles it (ptxas and nvlink as processes). The
script measures the compile as JAX itself does (its own jax.monitoring listener, beside gpujit's
adapter) and prints it: OWN <fun_name> <ms> for each compiled function."""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.monitoring as mon  # noqa: E402
import jax.numpy as jnp  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
own = {}
events = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
          "/jax/core/compile/backend_compile_duration")


def listen(event, secs, **kw):
    if event in events:
        name = kw.get("fun_name", "?")
        name = name if name.startswith("jit(") else "jit(%s)" % name
        own[name] = own.get(name, 0.0) + secs * 1e3


mon.register_event_duration_secs_listener(listen)


@jax.jit
def f(x):
    return jnp.sin(x) * 2.0 + x


x = jnp.arange(1 << 20, dtype=jnp.float32)
for _ in range(n):
    y = f(x)
y.block_until_ready()
print("calls f %d" % n)
for name, ms in own.items():
    print("OWN %s %.3f" % (name, ms))
