# exit: 2
# expect: *invalid --max-size 'lots'*
$GPUJIT cache --cache-dir c prune --max-size lots
