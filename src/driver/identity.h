/* What identifies the CUDA driver and the GPUs without starting the driver: read from /proc and
 * /sys, so a cached answer about the GPU (its arch) can be looked up for free. */
#ifndef GPUJIT_DRIVER_IDENTITY_H
#define GPUJIT_DRIVER_IDENTITY_H

#include "base/buf.h"

/**
 * The NVIDIA kernel module's version line, every NVIDIA display or 3D controller on the PCI bus
 * (address, device and subsystem ids), and the variables that pick and order devices
 * (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, GPUJIT_DEVICE), as text. $GPUJIT_SYSFS_ROOT, when
 * set, is put before /proc and /sys (for tests).
 * @return 0, or GPUJIT_ENODRIVER when no NVIDIA kernel driver is visible there.
 */
int gpujit__driver_identity(gpujit__buf *out);

#endif
