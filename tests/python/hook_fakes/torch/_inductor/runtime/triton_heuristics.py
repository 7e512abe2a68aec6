"""CachingAutotuner as Inductor 2.11 lays it out: inductor_meta names the kernel;
autotune_to_one_config benchmarks every config once (at the kernel's first call) and keeps the
fastest; run() autotunes when more than one config is left."""
import time


class CachingAutotuner:
    def __init__(self, kernel_name, configs):
        self.inductor_meta = {"kernel_name": kernel_name}
        self.configs = list(configs)

    def autotune_to_one_config(self, *args, **kwargs):
        timings = {}
        for c in self.configs:
            time.sleep(0.002)
            timings[c] = c
        self.configs = [min(timings, key=timings.get)]

    def run(self, *args, **kwargs):
        if len(self.configs) > 1:
            self.autotune_to_one_config(*args, **kwargs)
        return self.configs[0]
