# exit: 0
# expect: *lean maxrregcount=32: 32 registers*
# expect: *lean --maxrregcount 40: 40 registers*
# expect: *default: 70 registers*
# expect: *fmad=false: same cubin as NVRTC's own*
# On the lean path gpujit runs ptxas itself: an NVRTC option meant for NVRTC's ptxas must reach
# it (-maxrregcount in any spelling) or NVRTC must make the cubin (--fmad=false), never be
# dropped; the key tells the builds apart.
cat > heavy.cu <<'CU'
extern "C" __global__ void heavy(const float *in, float *out, int n)
{
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; j++) acc[j] = in[threadIdx.x + j * n];
#pragma unroll
  for (int it = 0; it < 8; it++)
#pragma unroll
    for (int j = 0; j < 48; j++) acc[j] = acc[j] * acc[(j + 7) % 48] + in[j];
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; j++) s += acc[j] * (float)(j + 1);
  out[threadIdx.x] = s;
}
CU
regs() { $GPUJIT -v build "$@" heavy.cu --arch sm_90 -o h.cubin 2>&1 | grep -o 'Used [0-9]* registers' | grep -o '[0-9]*'; }
echo "lean maxrregcount=32: $(regs -Xnvrtc -maxrregcount=32) registers"
echo "lean --maxrregcount 40: $(regs -Xnvrtc --maxrregcount -Xnvrtc 40) registers"
echo "default: $(regs) registers"
$GPUJIT build -q -Xnvrtc --fmad=false heavy.cu --arch sm_90 -o lean.cubin
$GPUJIT build -q --no-cache --no-lean -Xnvrtc --fmad=false heavy.cu --arch sm_90 -o nvrtc.cubin
cmp -s lean.cubin nvrtc.cubin && echo "fmad=false: same cubin as NVRTC's own" || echo "fmad=false: differs"
