# exit: 0
# expect: *second: miss*
# expect: *third: hit*
# expect: *value: 2*
# A header reached only through #include_next (relative -I, as a user types it) is a
# dependency: editing it must miss, never serve the old code.
mkdir A B
printf '#include_next <h.h>\n' > A/h.h
printf '#define VAL 1\n' > B/h.h
printf '#include <h.h>\nextern "C" __global__ void k(int *p) { *p = VAL; }\n' > k.cu
st() { $GPUJIT build -I A -I B k.cu --ptx -o k.ptx | head -1 | grep -o 'miss\|hit'; }
echo "first: $(st)"
printf '#define VAL 2\n' > B/h.h
echo "second: $(st)"
echo "third: $(st)"
echo "value: $(grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';')"
