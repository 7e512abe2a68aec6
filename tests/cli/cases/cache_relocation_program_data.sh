# exit: 0
# expect: *plain, same length: hit, names b: yes, names a: no*
# expect: *__FILE__, same length: miss, names b: yes, names a: no*
# expect: *__FILE__, other length: miss, names b: yes, names a: no*
# expect: *__FILE__ in PTX: miss*
# expect: *__FILE__ in PTX, other length: miss*
# Relocation under a base directory rewrites only line info. A module whose own data names the
# checkout (__FILE__, which a device assert prints) is compiled for the other checkout, never
# patched: at the same length the bytes would be rewritten in the program's data, at another
# the old path would stay.
mkdir -p a/src
printf 'extern "C" __global__ void k(int *o) { *o = 1; }\n' > a/src/plain.cu
printf '__device__ const char where[] = __FILE__;\nextern "C" __global__ void k(char *o) { for (int i = 0; i < 64 && where[i]; i++) o[i] = where[i]; }\n' > a/src/file.cu
cp -a a b
cp -a a a-longer
build() { (cd "$1" && GPUJIT_BASE_DIR=$PWD $GPUJIT build "src/$2" "${@:3}" | head -1 | grep -o 'miss\|hit'); }
names() { grep -aq "$PWD/$1/src" "$2" && echo yes || echo no; }
build a plain.cu --arch sm_90 -o out.cubin >/dev/null
echo "plain, same length: $(build b plain.cu --arch sm_90 -o out.cubin), names b: $(names b b/out.cubin), names a: $(names a b/out.cubin)"
build a file.cu --arch sm_90 -o out.cubin >/dev/null
echo "__FILE__, same length: $(build b file.cu --arch sm_90 -o out.cubin), names b: $(names b b/out.cubin), names a: $(names a b/out.cubin)"
echo "__FILE__, other length: $(build a-longer file.cu --arch sm_90 -o out.cubin), names b: $(names a-longer a-longer/out.cubin), names a: $(names a a-longer/out.cubin)"
build a file.cu --ptx -o out.ptx >/dev/null
echo "__FILE__ in PTX: $(build b file.cu --ptx -o out.ptx)"
echo "__FILE__ in PTX, other length: $(build a-longer file.cu --ptx -o out.ptx)"
