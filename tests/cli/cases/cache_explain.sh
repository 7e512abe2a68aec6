# exit: 0
# expect: *first: *cache miss: never built with this source, these options and this toolkit*
# expect: *header: *cache miss: */h.cuh changed (content)*
# expect: *removed: *cache miss: */h.cuh was removed*
# expect: *absent now present: *cache miss: */inc1 now holds h.cuh, which the include search finds first*
# expect: *option: *cache miss: since its last build: -D X=1 added*
# expect: *arch and flag: *cache miss: since its last build: arch sm_90 -> sm_89; --fast-math off -> on; -D X=1 gone*
# expect: *nvrtc option: *cache miss: since its last build: --extra-device-vectorization added*
# expect: *source: *cache miss: since its last build: */k.cu changed*
# expect: *other module: *cache miss: never built with this source, these options and this toolkit*
# Why did it miss? -v says which input changed and how (as ninja's -d explain): a header's
# content, a header removed, a file now found earlier on the search path; for a request never
# built, what differs from the module's last build (an option, the arch, the toolkit, a source).
printf '#include "h.cuh"\nextern "C" __global__ void hk(float *x) { x[0] = F; }\n' > k.cu
mkdir inc1 inc2 && printf '#define F 2.0f\n' > inc2/h.cuh && cp inc2/h.cuh h2.cuh
b() { "$GPUJIT" build -v --cache-dir c --arch sm_90 -Iinc1 -Iinc2 -o k.cubin "$@" k.cu 2>&1 | grep "cache miss"; }
echo "first: $(b)"
printf '#define F 3.0f\n' > inc2/h.cuh
echo "header: $(b)"
b >/dev/null; mv inc2/h.cuh inc2/gone; cp h2.cuh inc2/h.cuh; b > /dev/null
echo "absent now present: $(cp h2.cuh inc1/h.cuh; b)"
rm inc1/h.cuh inc2/h.cuh
echo "removed: $(b)"
cp h2.cuh inc2/h.cuh
echo "option: $(b -DX=1)"
b2() { "$GPUJIT" build -v --cache-dir c -Iinc1 -Iinc2 -o k.cubin "$@" 2>&1 | grep "cache miss"; }
echo "arch and flag: $(b2 --arch sm_89 --fast-math k.cu)"
echo "nvrtc option: $(b2 --arch sm_89 --fast-math -Xnvrtc --extra-device-vectorization k.cu)"
printf '#include "h.cuh"\nextern "C" __global__ void hk(float *x) { x[1] = F; }\n' > k.cu
echo "source: $(b2 --arch sm_89 --fast-math -Xnvrtc --extra-device-vectorization k.cu)"
cp k.cu other.cu
echo "other module: $(b2 --arch sm_89 other.cu)"
