# exit: 2
# expect: *invalid --maxrregcount 'lots'*
$GPUJIT build --maxrregcount lots "$EXAMPLES/saxpy.cu"
