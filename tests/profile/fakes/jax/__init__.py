"""A stand-in for JAX's monitoring API, firing the events jax 0.11 fires around a jit compile."""
import time

from . import monitoring

__version__ = "0.0-fake"


def jit_compile(name, trace_s=0.01, lower_s=0.02, backend_s=0.05, hit=False):
    def span(ev, secs, fun):
        t0 = time.time()
        time.sleep(secs)
        t1 = time.time()
        for cb in monitoring._spans:
            cb(ev, t0, t1, fun_name=fun)
    span("/jax/core/compile/jaxpr_trace_duration", trace_s, name)
    span("/jax/core/compile/jaxpr_to_mlir_module_duration", lower_s, "jit(%s)" % name)
    t0 = time.time()
    for cb in monitoring._events:
        cb("/jax/compilation_cache/compile_requests_use_cache")
    if hit:
        for cb in monitoring._events:
            cb("/jax/compilation_cache/cache_hits")
    time.sleep(backend_s)
    t1 = time.time()
    for cb in monitoring._spans:
        cb("/jax/core/compile/backend_compile_duration", t0, t1, fun_name="jit(%s)" % name)
