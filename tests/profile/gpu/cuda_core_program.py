"""cuda.core's Program (NVRTC linked directly by cuda-bindings) under gpujit profile."""
import sys

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
dev = Device()
dev.set_current()
stream = dev.create_stream()
code = r'''
extern "C" __global__ void gj_core(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}'''
arch = "".join(str(v) for v in dev.compute_capability)
prog = Program(code, code_type="c++", options=ProgramOptions(arch="sm_" + arch))
mod = prog.compile("cubin")
kernel = mod.get_kernel("gj_core")
size = 1 << 20
buf = dev.allocate(size * 4, stream=stream)
import numpy as np  # noqa: E402
for _ in range(n):
    launch(stream, LaunchConfig(grid=size // 256, block=256), kernel, buf, np.int32(size))
stream.sync()
print("launches gj_core %d" % n)
