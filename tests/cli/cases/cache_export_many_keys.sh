# exit: 0
# expect: *exported 1 entry to k.tar*
# expect: *exported 0 entries to none.tar*
# --key is repeatable without a bound: the one key that names an entry comes 300th, after 299
# that name none, and is not left out (nothing is dropped past 256, or any other count).
$GPUJIT build --arch sm_90 --cache-dir a --ptx -o s.ptx "$EXAMPLES/saxpy.cu" >/dev/null || exit 1
key=$($GPUJIT cache --cache-dir a ls --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"][0]["key"])')
args=()
for i in $(seq 1 299); do args+=(--key "$(printf 'ffff%04x' "$i")"); done
$GPUJIT cache --cache-dir a export none.tar "${args[@]}" || exit 1
$GPUJIT cache --cache-dir a export k.tar "${args[@]}" --key "$key" || exit 1
