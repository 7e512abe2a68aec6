# exit: 2
# expect: *expected two sides: BASE NEW*
# expect: *invalid --fail-above 'ten'*
# expect: *no \*.json traces*
$GPUJIT trace diff only.json
$GPUJIT trace diff --fail-above ten a.json b.json
mkdir empty
$GPUJIT trace diff empty empty; echo "exit $?"
exit 2
