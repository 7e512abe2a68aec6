from . import compiler


class CUDACache:
    def __init__(self, hits=()):
        self.hits = set(hits)

    def load_overload(self, sig, target_context):
        return ("kernel from the cache", sig) if sig in self.hits else None


class CUDADispatcher:
    def __init__(self, py_func, cache=None):
        self.py_func, self.cache, self.overloads = py_func, cache or CUDACache(), {}

    def compile(self, sig):
        kernel = self.cache.load_overload(sig, None)
        if kernel is None:
            kernel = compiler.compile_cuda(self.py_func, None, sig)
        self.overloads[sig] = kernel
        return kernel
