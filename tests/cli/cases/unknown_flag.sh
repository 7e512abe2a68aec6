# exit: 2
# expect: gpujit: build: unknown option '--frobnicate'*Try 'gpujit build --help'.
$GPUJIT build --frobnicate "$EXAMPLES/saxpy.cu"
