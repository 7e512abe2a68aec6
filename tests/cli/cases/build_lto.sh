# exit: 0
# expect: *link * ms*
# expect: *kernel polynomial*
# expect: * polynomial_inplace*
$GPUJIT build --arch sm_90 -o lto.cubin "$EXAMPLES/lto/main.cu" "$EXAMPLES/lto/helper.cu" || exit 1
readelf -sW lto.cubin | grep -E ' polynomial(_inplace)?$'
