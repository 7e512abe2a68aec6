# exit: 0
# expect: *build /dev/zero: 4 *is a character device; gpujit reads regular files only*
# expect: *build fifo: 4 *is a FIFO; gpujit reads regular files only*
# expect: *analyze /dev/zero: 4 *is a character device*
# expect: *analyze fifo: 4 *is a FIFO*
# Sources, headers and traces are read with a bound: a device or a FIFO with no writer is
# refused at once with its kind named (timeout 20 s: a hang fails the case), never read forever.
mkfifo f.cu f.json
t() { out=$(timeout 20 "$@" 2>&1); echo "$? $out"; }
echo "build /dev/zero: $(t $GPUJIT build /dev/zero -o x.cubin)"
echo "build fifo: $(t $GPUJIT build f.cu -o x.cubin)"
echo "analyze /dev/zero: $(t $GPUJIT trace analyze /dev/zero)"
echo "analyze fifo: $(t $GPUJIT trace analyze f.json)"
