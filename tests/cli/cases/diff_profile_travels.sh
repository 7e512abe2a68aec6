# exit: 0
# expect: *imported 1 entry*
# expect: *1 cache hit counted with the compile profile recorded*
# reject: *without a recorded profile*
# A compile profile travels with its entry: exported, imported, replayed by a traced hit.
GPUJIT_CACHE_DIR=a $GPUJIT build -q --time-trace=miss.json -o a.cubin "$EXAMPLES/saxpy.cu" || exit 1
GPUJIT_CACHE_DIR=a $GPUJIT cache export x.tar.gz || exit 1
GPUJIT_CACHE_DIR=b $GPUJIT cache import x.tar.gz || exit 1
GPUJIT_CACHE_DIR=b $GPUJIT build -q --time-trace=hit.json -o a.cubin "$EXAMPLES/saxpy.cu" || exit 1
$GPUJIT trace analyze hit.json
