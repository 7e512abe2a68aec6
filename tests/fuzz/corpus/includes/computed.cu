#define HDR <cuda_fp16.h>
#include HDR
#include HEADER
#if __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
#endif
__global__ void k() {}
