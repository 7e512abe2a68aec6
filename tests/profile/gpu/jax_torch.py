"""JAX and PyTorch in one process under gpujit profile: a jitted JAX function (XLA's fusion
kernels) called N times, and PyTorch elementwise ops (torch's prebuilt kernels, loaded lazily)
N times, interleaved. Each module must be in its own row: XLA's under jit(gj_jax_truth),
PyTorch's prebuilt. Prints launches lines and OWN <fun_name> <ms> (JAX's own compile measure)."""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.monitoring as mon  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
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
def gj_jax_truth(x):
    return jnp.tanh(x) * 3.0 + jnp.cos(x)


x = jnp.ones((1 << 20,), jnp.float32)
t = torch.ones(1 << 20, device="cuda")
for _ in range(n):
    x = gj_jax_truth(x)
    t = t * 1.0001 + 0.5
x.block_until_ready()
torch.cuda.synchronize()
print("launches gj_jax_truth %d" % n)
for name, ms in own.items():
    print("OWN %s %.3f" % (name, ms))
