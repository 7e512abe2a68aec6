# exit: 0
# expect: *max-size=5X: 0 *warning: remote cache http://127.0.0.1:9/c: max-size: invalid size '5X': expected a number with kB*a bare number is GiB*building uncached*
# expect: *max-size=lots: 0 *max-size: invalid size 'lots'*
# A remote store's max-size= reads sizes as every other size does (ccache's: 256MiB, 1GB, a bare
# number is GiB); a bad one is said, naming the attribute, and the build goes on uncached (as for
# any bad remote setting).
r() { out=$("$@" 2>&1); echo "$? $out"; }
cp "$EXAMPLES/saxpy.cu" .
echo "max-size=5X: $(r "$GPUJIT" build --arch sm_90 --remote-cache 'http://127.0.0.1:9/c|max-size=5X' -o s.cubin saxpy.cu)"
echo "max-size=lots: $(r "$GPUJIT" build --arch sm_90 --remote-cache 'http://127.0.0.1:9/c|max-size=lots' -o s.cubin saxpy.cu)"
