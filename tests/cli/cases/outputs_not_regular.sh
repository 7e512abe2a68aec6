# exit: 0
# expect: *build -o null: 0 c*
# expect: *time-trace null: 0 c*
# expect: *export null: 0 c*
# expect: *profile --trace null: 0 c*
# expect: *profile --json=null: 0 c*
# expect: *build -o fifo: 0 p got ELF*
# expect: *build -o link: 2 *out.link: is a symbolic link; gpujit writes regular files, character devices and FIFOs and replaces nothing else* target kept*
# expect: *build -o dir: 2 *is a directory*
# expect: *profile -o link: 2 target kept*
# expect: *build -o file: 0 f ELF*
# A path gpujit is told to write that is a character device (a private /dev/null made here) or a
# FIFO is written through and stays what it was; a symbolic link or directory is refused and
# left alone; a regular file is replaced. (Before: the node was renamed over by a regular file.)
if ! mknod null c 1 3 2>/dev/null || ! echo x > null 2>/dev/null; then
  echo "skip: cannot make a device node here (not root, or a nodev mount)"; exit 77
fi
kind() { stat -c %F "$1" | sed 's/character special file/c/; s/fifo/p/; s/regular file/f/; s/regular empty file/f/'; }
t() { timeout 60 "$@" >out.txt 2>&1; echo "$? $(cat out.txt)"; }
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
r=$(t $GPUJIT build --arch sm_90 -q k.cu -o null); echo "build -o null: ${r%% *} $(kind null)"
r=$(t $GPUJIT build --arch sm_90 -q --no-cache k.cu -o k.cubin --time-trace=null); echo "time-trace null: ${r%% *} $(kind null)"
r=$(t $GPUJIT cache export null); echo "export null: ${r%% *} $(kind null) $r"
r=$(t $GPUJIT profile --trace null -- true); echo "profile --trace null: ${r%% *} $(kind null)"
r=$(t $GPUJIT profile --json=null -- true); echo "profile --json=null: ${r%% *} $(kind null)"
mkfifo fifo
cat fifo > got & reader=$!
r=$(t $GPUJIT build --arch sm_90 -q k.cu -o fifo); wait $reader
echo "build -o fifo: ${r%% *} $(kind fifo) got $(head -c 4 got | tail -c 3)"
echo keep > target; ln -s target out.link
r=$(t $GPUJIT build --arch sm_90 -q k.cu -o out.link); echo "build -o link: $r $( [ -L out.link ] && [ "$(cat target)" = keep ] && echo target kept)"
r=$(t $GPUJIT profile -o out.link -- true); echo "profile -o link: ${r%% *} $( [ -L out.link ] && [ "$(cat target)" = keep ] && echo target kept)"
mkdir d
r=$(t $GPUJIT build --arch sm_90 -q k.cu -o d); echo "build -o dir: $r"
echo old > file
r=$(t $GPUJIT build --arch sm_90 -q k.cu -o file); echo "build -o file: ${r%% *} $(kind file) $(head -c 4 file | tail -c 3)"
