/* A bound kernel-regions buffer read back and written as records (kregions_records.c): its slot
 * table and claimed chunks copied from the device, the names its events point at read from the
 * module's memory, the calls paired and summarised (kregions_analyze.h), one "kregions" record per
 * region and a bounded number of "kslices" for the trace. kregions.c binds the buffers and says
 * when to read them. */
#ifndef GPUJIT_INJECT_KREGIONS_RECORDS_H
#define GPUJIT_INJECT_KREGIONS_RECORDS_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "inject/record.h"

/* The layout of gpujit/regions.cuh's state this library binds (GPUJIT_REGIONS_ABI): abi, scope
 * (u32); events, capacity, counters, slots, reserved (u64); nslots, chunk (u32). The counters —
 * chunks claimed, events lost — are the two words after the slots, in the slots' allocation. */
#define GJI_KR_LAYOUT 3
#define GJI_KR_STATE_BYTES 56
#define GJI_KR_OFF_EVENTS 8

/** The driver's functions the regions use, resolved from the process's libcuda (kregions.c). */
typedef struct gji_kr_driver {
  CUresult (*module_global)(CUdeviceptr *, size_t *, CUmodule, const char *);
  CUresult (*library_global)(CUdeviceptr *, size_t *, CUlibrary, const char *);
  CUresult (*ctx_current)(CUcontext *);
  CUresult (*ctx_push)(CUcontext);
  CUresult (*ctx_pop)(CUcontext *);
  CUresult (*ctx_sync)(void);
  CUresult (*ctx_device)(CUdevice *);
  CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*alloc)(CUdeviceptr *, size_t);
  CUresult (*free)(CUdeviceptr);
  CUresult (*htod)(CUdeviceptr, const void *, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*memset32)(CUdeviceptr, unsigned int, size_t);
  CUresult (*pointer_attr)(void *, CUpointer_attribute, CUdeviceptr);
} gji_kr_driver;

/** One module's bound buffer. */
typedef struct gji_kr_buffer {
  uint64_t handles[2];  /* the module or library it was found through, and a second handle of the
                           same state (a library's module in the context, seen at a launch) */
  CUcontext ctx;
  CUdeviceptr state, events, slots; /* slots: nslots words, then the two counters */
  uint64_t capacity;
  unsigned nslots, chunk, scope;
  bool open;            /* its events since the last reset belong to a recorded window */
  bool foreign;         /* the program bound the state itself (gpujit's own loads): not ours to read */
} gji_kr_buffer;

/**
 * Read `b` back and write its records: its context is current and synchronised. `at` says which
 * read point ("step", "unload", "context", "exit"); `read` numbers the read in the process (kslices
 * name it). The state's buffer no longer ours (the program bound it): `b->foreign` set, nothing
 * written. @return 0, or -1 where a copy failed (the caller says so once).
 */
GJI_HIDDEN int gji_kregions_read_buffer(const gji_kr_driver *d, gji_kr_buffer *b, const char *at, uint64_t read);

/** Empty `b` (every slot and both counters zeroed), its context current. @return 0 or -1. */
GJI_HIDDEN int gji_kregions_reset_buffer(const gji_kr_driver *d, const gji_kr_buffer *b);

#endif
