# exit: 2
# expect: *'xyz' is not a cache key*
$GPUJIT cache --cache-dir c show xyz
