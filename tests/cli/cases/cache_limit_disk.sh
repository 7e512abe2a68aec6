# exit: 0
# expect: *fits: yes*
# expect: *stats match du: yes*
# expect: *tighter: fits*
# A size limit bounds what the cache occupies on disk (blocks, records and all), and
# `cache stats` shows that figure.
export GPUJIT_CACHE_MAX_SIZE=64KiB
for f in saxpy scale vecops block_reduce; do
  $GPUJIT build -q "$EXAMPLES/$f.cu" -o "$f.cubin" || exit 1
done
du=$(du -sk "$GPUJIT_CACHE_DIR" | cut -f1)
[ "$du" -le 64 ] && echo "fits: yes" || echo "fits: no (${du} KiB)"
size=$($GPUJIT cache stats | awk '/^size/ {print $2, $3}')
[ "$size" = "$du.0 KiB" ] && echo "stats match du: yes" || echo "stats match du: no ($size vs $du KiB)"
# Tighter than entries can go: the compile-time notes go too (hints, never needed for a hit).
export GPUJIT_CACHE_MAX_SIZE=48KiB
$GPUJIT build -q "$EXAMPLES/scale.cu" -o scale.cubin || exit 1
du=$(du -sk "$GPUJIT_CACHE_DIR" | cut -f1)
[ "$du" -le 48 ] && echo "tighter: fits" || echo "tighter: ${du} KiB"
