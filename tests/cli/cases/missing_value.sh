# exit: 2
# expect: *option '-o' needs a value*
$GPUJIT build "$EXAMPLES/saxpy.cu" -o
