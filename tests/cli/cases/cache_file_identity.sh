# exit: 0
# expect: *link: miss hit 1*
# expect: *copy: miss 2*
# expect: *copy again: hit 2*
# expect: *link again: hit 1*
# expect: *symlink: hit 1*
# expect: *symlink to copy: hit 2*
# #pragma once skips a second include of the same file (hard link, symlink) but reads a copy
# again: replacing a link by a copy with the same content, or the reverse, must not be served
# the other's build (a build of the same shape, recorded earlier, is the right one to serve).
cat > k.cu <<'CU'
#include "a.h"
#define ONCE_SEEN 1
#include "b.h"
#ifdef TWICE
extern "C" __global__ void k(int *o) { *o = 2; }
#else
extern "C" __global__ void k(int *o) { *o = 1; }
#endif
CU
# a.h read twice defines TWICE
printf '#pragma once\n#ifdef ONCE_SEEN\n#define TWICE 1\n#endif\n' > a.h
st() { $GPUJIT build k.cu --ptx -o k.ptx 2>&1 | head -1 | grep -o 'miss\|hit\|error'; }
val() { grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';'; }
ln a.h b.h
echo "link: $(st) $(st) $(val)"
rm b.h; cp -p a.h b.h
echo "copy: $(st) $(val)"
echo "copy again: $(st) $(val)"
rm b.h; ln a.h b.h
echo "link again: $(st) $(val)"
rm b.h; ln -s a.h b.h
echo "symlink: $(st) $(val)"
rm b.h; cp -p a.h b.h
echo "symlink to copy: $(st) $(val)"
