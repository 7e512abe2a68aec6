#include_next <cuda_fp16.h>
#include "missing.h" // comment
/* #include "commented.h" */
#include \
  <cuda/std/cstdint>
