"""triton.runtime.autotuner.Autotuner as Triton 3.4-3.6 lays it out: run() benchmarks each config
once per key through _bench(*args, config=..., **meta), which times the kernel with do_bench and
returns its timings; the best config is kept. A config is compiled at its first benchmark (its
kernel's first run). No GPU: a benchmark sleeps."""
import time

from ..compiler import compile


class Config:
    def __init__(self, kwargs):
        self.kwargs = kwargs


class Autotuner:
    def __init__(self, fn, configs):
        self.base_fn = fn
        self.configs = configs
        self.cache = {}
        self.compiled = set()

    def _bench(self, *args, config, **meta):
        if config.kwargs["BLOCK"] not in self.compiled:  # its kernel's first run compiles it
            self.compiled.add(config.kwargs["BLOCK"])
            compile("%s_%d" % (self.base_fn.__name__, config.kwargs["BLOCK"]))
        time.sleep(0.002 * config.kwargs["BLOCK"] / 256)
        return [0.002 * config.kwargs["BLOCK"] / 256]

    def run(self, *args, key=0):
        if key not in self.cache:
            timings = {c: self._bench(*args, config=c) for c in self.configs}
            self.cache[key] = min(timings, key=timings.get)
        self.best_config = self.cache[key]
        return self.best_config.kwargs["BLOCK"]
