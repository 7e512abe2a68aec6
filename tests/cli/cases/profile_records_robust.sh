# exit: 0
# expect: *relative keep, child cd: 0 compiles [1-9]*
# expect: *odd files: 0 compiles [1-9]*
# expect: *note: records file p1-1.jsonl could not be read (*FIFO*)*
# expect: *note: records file p2-2.jsonl could not be read (*directory*)*
# expect: *note: records file p3-3.jsonl could not be read (*No such file*)*
# expect: *note: records file p4-4.jsonl could not be read (*over gpujit's limit*)*
# expect: *note: records file p5-5.jsonl is of format version 99; this gpujit reads version 1*
# expect: *note: 1 line of records file p6-6.jsonl could not be read (damaged)*
# expect: *note: process 66: after a hole*
# expect: *removed dir: 3 *note: the records directory * could not be read (No such file or directory)*
# reject: *internal error*
# Whatever lies in the records directory, the report comes and the exit status is the
# command's: a file that cannot be read (a FIFO, a directory, a dangling link, one over the size
# limit), a file of another format and a damaged line are each named in a note, and the rest is
# reported; NUL bytes before a line (a hole left by a crash) are passed over. A relative --keep
# is made absolute, so a child that changes directory records where the report reads.
# (ptxas compiles here: the profiled program is not gpujit itself, which a sanitizer build cannot
# have the injection library preloaded into.)
cuda=${CUDA_PATH:-/usr/local/cuda}
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
$GPUJIT build -q --ptx --arch sm_90 -o k.ptx k.cu || exit 1
r=$($GPUJIT profile -q --json p.json --keep rec -- sh -c "cd / && $cuda/bin/ptxas -arch=sm_90 $PWD/k.ptx -o $PWD/k.cubin" 2>&1); rc=$?
echo "relative keep, child cd: $rc compiles $(python3 -c "import json; print(json.load(open('p.json'))['totals']['compiles'])")"
mkdir odd
mkfifo odd/p1-1.jsonl
mkdir odd/p2-2.jsonl
ln -s nowhere odd/p3-3.jsonl
truncate -s 2G odd/p4-4.jsonl
printf '{"k":"proc","v":99,"pid":55,"tid":55,"t":1}\n{"k":"note","pid":55,"tid":55,"what":"x","msg":"from the future","t":2}\n' > odd/p5-5.jsonl
{ printf '{"k":"proc","v":1,"pid":66,"tid":66,"ppid":1,"t":1}\n'; head -c 200 /dev/zero
  printf '{"k":"note","pid":66,"tid":66,"what":"y","msg":"after a hole","t":2}\n{"k":"no\\u\n'; } > odd/p6-6.jsonl
r=$(timeout 60 $GPUJIT profile --json p2.json --keep odd -- $cuda/bin/ptxas -arch=sm_90 k.ptx -o k.cubin 2>&1); rc=$?
echo "odd files: $rc compiles $(python3 -c "import json; print(json.load(open('p2.json'))['totals']['compiles'])")"
echo "$r"
r=$($GPUJIT profile --keep gone -- sh -c "rm -rf $PWD/gone; exit 3" 2>&1); echo "removed dir: $? $r"
