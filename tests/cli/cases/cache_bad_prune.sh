# exit: 2
# expect: *--max-size: invalid size 'lots'*
$GPUJIT cache --cache-dir c prune --max-size lots
