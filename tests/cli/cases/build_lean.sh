# exit: 0
# expect: *"lean":*"ptx_bytes_before":*"removed":*
# expect: *hit*lean PTX 110.1 KiB -> * KiB, 832 of 832 module-scope variables removed*
# expect: *no-lean: {}*
# expect: *no-lean key differs*
# Lean is the default: JSON and the report say what the pass did (a hit too: the entry recorded it);
# --no-lean is another entry.
"$GPUJIT" build --json --arch sm_90 -o lean.cubin "$EXAMPLES/block_reduce.cu" | tr -d '\n\t '
echo
"$GPUJIT" build -v --arch sm_90 -o lean.cubin "$EXAMPLES/block_reduce.cu" 2>&1 | grep -v "^ptxas"
a=$("$GPUJIT" build --json --arch sm_90 -o lean.cubin "$EXAMPLES/saxpy.cu" | python3 -c 'import json,sys; print(json.load(sys.stdin)["modules"][0]["key"])')
"$GPUJIT" build --json --no-lean --arch sm_90 -o whole.cubin "$EXAMPLES/saxpy.cu" >whole.json
python3 -c 'import json,sys; print("no-lean:", json.dumps(json.load(open("whole.json"))["modules"][0].get("lean", {})))'
b=$(python3 -c 'import json,sys; print(json.load(open("whole.json"))["modules"][0]["key"])')
[ "$a" != "$b" ] && echo "no-lean key differs"
