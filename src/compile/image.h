/* Reading compiled images: kernel names, ptxas resource lines, cubin parameter tables. */
#ifndef GPUJIT_COMPILE_IMAGE_H
#define GPUJIT_COMPILE_IMAGE_H

#include <elf.h>

#include "base/buf.h"
#include "gpujit/module.h"

/** The section table of a 64-bit ELF image, every section that has bytes lying inside the image
 *  (tables 8-byte aligned, as NVRTC and nvJitLink write them); NULL for anything else.
 *  @param count receives the number of sections. */
const Elf64_Shdr *gpujit__elf_sections(const void *image, size_t size, unsigned *count);
/** The string at `off` of string-table section `strtab`, NUL-terminated inside it, or NULL. */
const char *gpujit__elf_string(const void *image, const Elf64_Shdr *strtab, uint64_t off);

/** Kernel (entry function) names from a cubin (ELF) or PTX image. */
int gpujit__image_kernels(gpujit__strvec *out, const void *image, size_t size,
                          gpujit_output_kind kind);

/** Per-kernel resources as ptxas -v reports them. */
typedef struct gpujit__kernel_resources {
  int registers, shared_bytes, stack_bytes, spill_stores, spill_loads;
} gpujit__kernel_resources;

/** Find `kernel`'s resources in a compile log with ptxas info; GPUJIT_ENOENT if absent. */
int gpujit__ptxas_resources(gpujit__kernel_resources *out, const char *log, const char *kernel);

/** Kernel parameter count and sizes from a cubin's .nv.info; -1 when unknown. */
int gpujit__cubin_params(const void *image, size_t size, const char *kernel, int *sizes, int max);

#endif
