/* gpujit: JIT module manager for CUDA C — umbrella header. */
#ifndef GPUJIT_H
#define GPUJIT_H

#include "gpujit/common.h"
#include "gpujit/error.h"
#include "gpujit/module.h"
#include "gpujit/trace.h"
#include "gpujit/cache.h"
#include "gpujit/run.h"
#include "gpujit/timing.h"
#include "gpujit/regions.h"
#include "gpujit/ncu.h"
#include "gpujit/project.h"
#include "gpujit/server.h"
#include "gpujit/profile.h"

#endif
