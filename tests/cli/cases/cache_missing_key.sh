# exit: 4
# expect: *no cache entry abcd1234*
$GPUJIT cache --cache-dir c show abcd1234
