/* Module loads and unloads as CUPTI's driver callbacks give them (cupti_loads.c): each load's
 * record, and the kernel regions of what was loaded bound, or read before it is unloaded. */
#ifndef GPUJIT_INJECT_CUPTI_LOADS_H
#define GPUJIT_INJECT_CUPTI_LOADS_H

#include <cupti.h>

#include "inject/record.h"

/** A load's callback (cuModuleLoad*, cuLibraryLoad*, cuLinkComplete): at its exit, its record. */
GJI_HIDDEN void gji_cupti_load(CUpti_CallbackId id, const CUpti_CallbackData *cb);
/** An unload's callback at its entry (cuModuleUnload, cuLibraryUnload): its regions read. */
GJI_HIDDEN void gji_cupti_unload(CUpti_CallbackId id, const CUpti_CallbackData *cb);

#endif
