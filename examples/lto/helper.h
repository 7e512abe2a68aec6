// Declarations shared by the two-file module.
#pragma once
__device__ float horner(float x);
