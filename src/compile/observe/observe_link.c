/* nvJitLink observed as NVRTC is (observe_got.c, observe_proc.c), but for its environment only:
 * it reads its own variables during a link (NVVM_IR_VER_CHK, LIBNVVM_NVVM_VERSION, …), and the
 * files it reads are those of the LTO-IR it is given, which the key holds. */
#include <stdbool.h>
#include <stddef.h>

#include "compile/observe/observe.h"
#include "compile/observe/observe_note.h"

static char link_unavailable[512] = "nvJitLink was not loaded by gpujit";

const char *gpujit__observe_link_unavailable(void) { return link_unavailable[0] ? link_unavailable : NULL; }

void gpujit__observe_install_link(void *handle)
{
  gpujit__observe_rebind(handle, true, link_unavailable);
  if (!link_unavailable[0])
    gpujit__observe_link_loaded();
}
