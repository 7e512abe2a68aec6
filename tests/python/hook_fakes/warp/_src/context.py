import time


class Module:
    def __init__(self, name, cached=False):
        self.name, self.cached, self.execs = name, cached, {}

    def _compile(self, device=None, output_dir=None, output_name=None, output_arch=None, use_ptx=None, options=None):
        if self.cached:
            return False  # Warp's kernel cache served it
        time.sleep(0.002)
        return True

    def load(self, device, block_dim=None, binary_path=None, output_arch=None, meta_path=None):
        if device not in self.execs:
            self._compile(device)
            self.execs[device] = "exec"
        return self.execs[device]
