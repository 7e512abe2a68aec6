/* Reading compiled images: kernel names, ptxas resource lines, cubin parameter tables. */
#ifndef GPUJIT_COMPILE_IMAGE_IMAGE_H
#define GPUJIT_COMPILE_IMAGE_IMAGE_H

#include <elf.h>

#include "base/buf.h"
#include "gpujit/module.h"

/** A 64-bit ELF image's section header table, copied (aligned) out of the image, whose offset
 *  may have any alignment (NVRTC 13.5 writes it 4-aligned). */
typedef struct gpujit__elf {
  const unsigned char *image;
  size_t size;
  Elf64_Shdr *sh;    /**< count headers, each section with bytes lying inside the image */
  unsigned count, shstrndx;
  uint64_t shoff;    /**< where the table lies in the image */
} gpujit__elf;

/** Read the section table; -1 (nothing to close) for anything that is not such an image. */
int gpujit__elf_open(gpujit__elf *elf, const void *image, size_t size);
void gpujit__elf_close(gpujit__elf *elf);
/** Section i's name, or NULL when it does not lie in the section-name table. */
const char *gpujit__elf_section_name(const gpujit__elf *elf, unsigned i);
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
