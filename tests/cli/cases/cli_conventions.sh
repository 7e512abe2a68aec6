# exit: 0
# expect: *combined: rc=0 out.cubin*
# expect: *combined before the command: rc=0*
# expect: *ends options: rc=0 -odd.cubin*
# expect: *operand -h: rc=0*
# expect: *build --jsno: 2 *unknown option '--jsno' (did you mean '--json'?)*
# expect: *cache --cache-dri: 2 *unknown option '--cache-dri' (did you mean '--cache-dir'?)*
# expect: *global --verbos: 2 *unknown option '--verbos' (did you mean '--verbose'?)*
# expect: *profile --no-cupt: 2 *unknown option '--no-cupt' (did you mean '--no-cupti'?)*
# expect: *run --repaet: 2 *unknown option '--repaet' (did you mean '--repeat'?)*
# expect: *far: 2 *unknown option '--zzzzzz'*
# reject: *'--zzzzzz' (did you mean*
# expect: *run help: --kernel --grid --block --shared --arg --launch*
# expect: *empty json file: 2 2 2 2 *option '--json=' needs a value*
# expect: *unwritable json: 4 *nowhere/r.json: No such file or directory*
# The command line follows POSIX and GNU conventions: short flags combine (-qv, -vo FILE), "--"
# ends options (an operand may then start with '-'), an unknown option names the nearest known one.
r() { out=$("$@" 2>&1); echo "$? $out"; }
printf 'extern "C" __global__ void k(float *x) { x[0] *= 2.0f; }\n' >k.cu
"$GPUJIT" build -qvo out.cubin --arch sm_90 --no-cache k.cu 2>/dev/null; echo "combined: rc=$? $(ls out.cubin)"
"$GPUJIT" -qv version >/dev/null 2>&1; echo "combined before the command: rc=$?"
cp k.cu ./-odd.cu
"$GPUJIT" build -q --arch sm_90 --no-cache -- -odd.cu; echo "ends options: rc=$? $(ls -- -odd.cubin)"
cp k.cu ./-h
"$GPUJIT" build -q --arch sm_90 --no-cache -o h.cubin -- -h; echo "operand -h: rc=$?"
echo "build --jsno: $(r "$GPUJIT" build --jsno k.cu)"
echo "cache --cache-dri: $(r "$GPUJIT" cache --cache-dri x stats)"
echo "global --verbos: $(r "$GPUJIT" --verbos build k.cu)"
echo "profile --no-cupt: $(r "$GPUJIT" profile --no-cupt -- true)"
echo "run --repaet: $(r "$GPUJIT" run --repaet 3 k.cu)"
echo "far: $(r "$GPUJIT" build --zzzzzz k.cu)"
h=$("$GPUJIT" run --help | sed -n '/^launch options:/,/^run options:/p')
echo "run help:$(for o in --kernel --grid --block --shared --arg --launch; do case "$h" in *"  $o "*) printf ' %s' "$o";; esac; done)"
e=""
for c in "build --json= k.cu" "cache --json= stats" "trace analyze --json= x.json" "trace diff --json= a b"; do
  "$GPUJIT" $c >/dev/null 2>err.txt; e="$e$? "
done
echo "empty json file: $e$(head -1 err.txt)"
echo "unwritable json: $(r "$GPUJIT" build --json=nowhere/r.json --arch sm_90 --no-cache -o j.cubin k.cu)"
