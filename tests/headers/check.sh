#!/usr/bin/env bash
# Compile each public header alone, as C11 and as C++17, with strict warnings.
set -u
inc=$1; shift
fail=0; n=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for h in "$@"; do
  rel=${h#"$inc"/}
  printf '#include "%s"\nint gpujit_header_check_%d;\n' "$rel" "$n" > "$tmp/c.c"
  cp "$tmp/c.c" "$tmp/cxx.cpp"
  if ! cc -std=c11 -Wall -Wextra -pedantic -Werror -I"$inc" -c "$tmp/c.c" -o "$tmp/c.o"; then
    echo "FAIL C11: $rel"; fail=$((fail+1))
  fi
  if ! c++ -std=c++17 -Wall -Wextra -pedantic -Werror -I"$inc" -c "$tmp/cxx.cpp" -o "$tmp/cxx.o"; then
    echo "FAIL C++: $rel"; fail=$((fail+1))
  fi
  n=$((n+1))
done
echo "$((2*n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
