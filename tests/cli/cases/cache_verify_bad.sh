# exit: 5
# expect: *bad *: image.cubin checksum mismatch*checked 1 entry, 1 bad*
$GPUJIT build -q --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" || exit 1
img=$(ls c/entries/*/*/image.cubin)
printf 'X' | dd of="$img" bs=1 seek=200 conv=notrunc 2>/dev/null
$GPUJIT cache --cache-dir c verify
