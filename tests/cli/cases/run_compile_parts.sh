# exit: 0
# expect: *compile (NVRTC)*front end *, NVVM optimizer *, codegen *, ptxas *, other *
# expect: *miss: parts add up to the compile: yes*
# expect: *hit: parts add up to the compile saved: yes*
# `gpujit run`'s compile half splits a compile into NVRTC's phases and "other" (the rest of the
# compile: gpujit's lean pass, NVRTC's program set-up): the parts shown add up to the total shown.
export GPUJIT_LIBCUDA=/nonexistent/libcuda.so.1
run() {
  $GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" --grid 1 --block 32 --arg i32:32 --arg f32:2 \
    --arg buf:f32:32 --arg buf:f32:32 2>&1
}
adds_up() { # the total ms and the parts of the line $1 names: equal to the 0.1 ms shown
  python3 -c '
import re, sys
line = [l for l in sys.stdin.read().splitlines() if sys.argv[1] in l][0]
total = float(re.search(r"([0-9.]+) ms", line).group(1))
parts = [float(x) for x in re.findall(r"(?:front end|optimizer|codegen|ptxas|other) (-?[0-9.]+)", line)]
print("yes" if len(parts) == 5 and abs(sum(parts) - round(total, 1)) < 0.05 else "no: %s %s" % (total, parts))' "$1"
}
out=$(run); echo "$out"
echo "miss: parts add up to the compile: $(echo "$out" | adds_up 'compile (NVRTC)')"
out=$(run); echo "$out"
echo "hit: parts add up to the compile saved: $(echo "$out" | adds_up 'compile saved')"
