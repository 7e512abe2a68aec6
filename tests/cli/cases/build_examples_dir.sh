# exit: 0
# expect: *5 modules: 0 hits, 5 built, 0 failed*
# reject: *Unresolved extern*
# `gpujit build DIR` on the repository's own examples: the directory's modules.json says what its
# modules are (lto/main.cu and lto/helper.cu are one LTO module), as make reads a Makefile.
cp -r "$EXAMPLES" ex
"$GPUJIT" build --no-cache -j 2 ex 2>&1 | tail -2
