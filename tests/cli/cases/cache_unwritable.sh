# exit: 0
# expect: *warning: cache */ro is not writable: building without storing*
# expect: *saxpy: */out.cubin  sm_90  1 kernel*
mkdir ro && chmod 555 ro && chmod 755 . && cp "$EXAMPLES/saxpy.cu" . && chmod 644 saxpy.cu
mkdir out && chmod 777 out
if [ "$(id -u)" = 0 ]; then run="setpriv --reuid=nobody --regid=nogroup --clear-groups"; else run=""; fi
# a read-only cache directory (its subdirectories cannot be created): the build succeeds uncached
$run "$GPUJIT" build --arch sm_90 --cache-dir "$PWD/ro" -o "$PWD/out/out.cubin" "$PWD/saxpy.cu"
