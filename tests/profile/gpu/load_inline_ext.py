"""A PyTorch C++/CUDA extension built by torch.utils.cpp_extension.load_inline under gpujit
profile: ninja runs $CXX for the C++ file, nvcc for the CUDA file, and links a shared library;
the kernel's fatbin is registered when the library is imported. Rows: the host compile, nvcc's
compile tied to the kernel's module (its fatbin), the link; N launches. Prints launches lines and
OWN_BUILD_MS (load_inline's wall time)."""
import os
import sys
import tempfile
import time

import torch
from torch.utils.cpp_extension import load_inline

cuda_src = r'''
#include <torch/extension.h>
__global__ void gj_inline_scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 1.0001f + 0.5f;
}
void scale(torch::Tensor x) {
  int n = x.numel();
  gj_inline_scale<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
}
'''
cpp_src = "void scale(torch::Tensor x);"
n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
build = tempfile.mkdtemp(prefix="gj-ext-")
t0 = time.perf_counter()
ext = load_inline(name="gj_inline_ext", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=["scale"],
                  build_directory=build, extra_cuda_cflags=["-arch=sm_90"], verbose=False)
t1 = time.perf_counter()
x = torch.ones(1 << 20, device="cuda")
for _ in range(n):
    ext.scale(x)
torch.cuda.synchronize()
print("launches gj_inline_scale %d" % n)
print("OWN_BUILD_MS %.3f" % ((t1 - t0) * 1e3))
