import time


class _Observations:
    cache_hit = False


class Kernel:
    def __init__(self, func):
        self.func, self.compiled, self.fe_ll_cache_observations = func, {}, _Observations()

    def materialize(self, key, py_args, arg_features=None):
        time.sleep(0.001)

    def launch_kernel(self, t_kernel, compiled_kernel_data, *args):
        if compiled_kernel_data is None:
            time.sleep(0.001)  # the back end, then the launch
        return len(args)

    def __call__(self, *py_args, **kwargs):
        key = len(py_args)
        first = key not in self.compiled
        if first:
            self.materialize(key, py_args)
            self.compiled[key] = "compiled kernel data"
        return self.launch_kernel("t_kernel", None if first else self.compiled[key], *py_args)
