# exit: 0
# expect: *build: interrupted; the cache is consistent*
# expect: *rc=130*
# expect: *checked * entries, 0 bad*
mkdir -p p
for i in 1 2 3 4 5 6 7 8; do  # about four compiles a worker: still building when the signal comes
  printf '#include <cub/block/block_reduce.cuh>\nextern "C" __global__ void k%d(float *o) { using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage s; o[0] = R(s).Sum(o[threadIdx.x]); }\n' $i > p/h$i.cu
done
$GPUJIT build --arch sm_90 --cache-dir c -j 2 p > out.txt 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
echo "rc=$?"
cat out.txt
$GPUJIT cache --cache-dir c verify
