# exit: 2
# expect: *invalid --arch 'sm_9x'*
# reject: *.cubin*
$GPUJIT build --arch sm_9x "$EXAMPLES/saxpy.cu"; rc=$?
ls
exit $rc
