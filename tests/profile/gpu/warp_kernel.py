"""An NVIDIA Warp kernel under gpujit profile: Warp compiles it with the NVRTC linked into
warp.so (no library gpujit can wrap). Warp prints its own measure of the module's load
("Module ... load on device 'cuda:0' took N ms (compiled)"); the script prints it as OWN."""
import io
import re
import sys
from contextlib import redirect_stdout

import warp as wp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
if len(sys.argv) > 2:
    wp.config.kernel_cache_dir = sys.argv[2]
wp.init()


@wp.kernel
def gj_warp_scale(x: wp.array(dtype=float), s: float):
    i = wp.tid()
    x[i] = x[i] * s


x = wp.ones(1 << 20, dtype=float, device="cuda:0")
log = io.StringIO()
with redirect_stdout(log):
    wp.load_module(device="cuda:0")
print(log.getvalue(), end="")
for _ in range(n):
    wp.launch(gj_warp_scale, dim=x.shape[0], inputs=[x, 1.0001], device="cuda:0")
wp.synchronize()
print("launches gj_warp_scale %d" % n)
m = re.search(r"load on device 'cuda:0' took ([0-9.]+) ms", log.getvalue())
if m:
    print("OWN __main__ %s" % m.group(1))
