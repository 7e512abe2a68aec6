/* The toolkit's versions as users and cache metadata see them: NVRTC's and nvJitLink's. */
#include "compile/nvrtc/link.h"
#include "compile/nvrtc/nvrtc.h"

int gpujit_toolkit_versions(int *nvrtc_major, int *nvrtc_minor, int *nvjitlink_major,
                            int *nvjitlink_minor)
{
  int a = 0, b = 0, c = 0, d = 0, err;
  if ((err = gpujit__nvrtc_version(&a, &b)) < 0 || (err = gpujit__nvjitlink_version(&c, &d)) < 0)
    return err;
  if (nvrtc_major)
    *nvrtc_major = a;
  if (nvrtc_minor)
    *nvrtc_minor = b;
  if (nvjitlink_major)
    *nvjitlink_major = c;
  if (nvjitlink_minor)
    *nvjitlink_minor = d;
  return 0;
}
