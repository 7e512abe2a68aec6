# exit: 0
# expect: *base           2 traces, 2 module builds*
# expect: *removed*saxpy*
# expect: *added*axpy*
# Directories of traces; a renamed module shows as removed and added, which is no regression.
mkdir -p base new
cp "$EXAMPLES/saxpy.cu" saxpy.cu
cp "$EXAMPLES/scale.cu" scale.cu
$GPUJIT build -q --no-cache --time-trace=base/a.json saxpy.cu || exit 1
$GPUJIT build -q --no-cache --time-trace=base/b.json scale.cu || exit 1
mv saxpy.cu axpy.cu
$GPUJIT build -q --no-cache --time-trace=new/a.json axpy.cu || exit 1
$GPUJIT build -q --no-cache --time-trace=new/b.json scale.cu || exit 1
$GPUJIT trace diff --fail-above 400 base new
