// A local header: its contents are part of the manifest's source hash.
#pragma once
__device__ inline float fma_axpy(float a, float x, float y) { return fmaf(a, x, y); }
