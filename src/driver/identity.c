/* What identifies the CUDA driver and the GPUs without starting the driver. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "driver/identity.h"

static const char *root(void)
{
  const char *r = getenv("GPUJIT_SYSFS_ROOT");
  return r && *r ? r : "";
}

/* The first line of a small file, trimmed; "" when unreadable. */
static void first_line(char *out, size_t size, const char *path)
{
  FILE *f = fopen(path, "re");
  out[0] = '\0';
  if (!f)
    return;
  if (fgets(out, (int)size, f))
    out[strcspn(out, "\r\n")] = '\0';
  fclose(f);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int gpujit__driver_identity(gpujit__buf *out)
{
  char path[PATH_MAX], line[512];
  gpujit__strvec gpus = {0};
  DIR *d;
  struct dirent *e;
  int err = 0;
  static const char *const env[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPUJIT_DEVICE"};

  out->len = 0;
  snprintf(path, sizeof(path), "%s/proc/driver/nvidia/version", root());
  first_line(line, sizeof(line), path);
  if (!line[0])
    return gpujit__error(GPUJIT_ENODRIVER, "no NVIDIA kernel driver visible (%s)", path);
  if ((err = gpujit__buf_printf(out, "driver %s\n", line)) < 0)
    return err;
  snprintf(path, sizeof(path), "%s/sys/bus/pci/devices", root());
  if ((d = opendir(path)) != NULL) {
    while (err == 0 && (e = readdir(d)) != NULL) {
      char vendor[32], cls[32], dev[32], sub[32];
      if (e->d_name[0] == '.')
        continue;
      snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/vendor", root(), e->d_name);
      first_line(vendor, sizeof(vendor), path);
      snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/class", root(), e->d_name);
      first_line(cls, sizeof(cls), path);
      /* NVIDIA (0x10de); VGA (0x0300xx) or 3D controller (0x0302xx). */
      if (strcmp(vendor, "0x10de") != 0 || (strncmp(cls, "0x0300", 6) != 0 && strncmp(cls, "0x0302", 6) != 0))
        continue;
      snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/device", root(), e->d_name);
      first_line(dev, sizeof(dev), path);
      snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/subsystem_device", root(), e->d_name);
      first_line(sub, sizeof(sub), path);
      err = gpujit__strvec_pushf(&gpus, "gpu %s %s %s", e->d_name, dev, sub);
    }
    closedir(d);
  }
  if (gpus.count)
    qsort(gpus.items, gpus.count, sizeof(*gpus.items), cmp_str);
  for (size_t i = 0; err == 0 && i < gpus.count; i++)
    err = gpujit__buf_printf(out, "%s\n", gpus.items[i]);
  for (size_t i = 0; err == 0 && i < sizeof(env) / sizeof(env[0]); i++) {
    const char *v = getenv(env[i]);
    err = gpujit__buf_printf(out, "%s=%s\n", env[i], v ? v : "");
  }
  gpujit__strvec_free(&gpus);
  return err;
}
