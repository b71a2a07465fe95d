// The one list of CUDA driver entry points nanocuda uses, and the lazily filled table of them.
//
// libcuda.so.1 is dlopen'ed on first use (never at import or static-init time) and every
// entry point is fetched with cuGetProcAddress at the CUDA version named here, so the ABI
// of each pointer matches the prototype in the cuda.h we compile against, whatever newer
// driver is installed. nanocuda links no CUDA library at build time.
#pragma once

#include <cuda.h>

#include <atomic>

namespace nanocuda::detail {

// X(name, cuda_version): the version is the one whose ABI matches cuda.h 13.0's prototype
// for `name` (e.g. cuEventElapsedTime is its _v2 from 12.8). Where the plain name resolves
// to an older ABI in the driver's table (cuGraphInstantiate gives the 5-argument form, which
// crashed us once), the explicit name is requested instead.
#define NANOCUDA_DRIVER_ENTRY_POINTS(X)          \
  X(cuInit, 2000)                                \
  X(cuDriverGetVersion, 2020)                    \
  X(cuGetErrorName, 6000)                        \
  X(cuGetErrorString, 6000)                      \
  X(cuDeviceGet, 2000)                           \
  X(cuDeviceGetCount, 2000)                      \
  X(cuDeviceGetName, 2000)                       \
  X(cuDeviceGetUuid, 11040)                      \
  X(cuDeviceTotalMem, 3020)                      \
  X(cuDeviceGetAttribute, 2000)                  \
  X(cuDevicePrimaryCtxRetain, 7000)              \
  X(cuDevicePrimaryCtxRelease, 11000)            \
  X(cuDeviceGetDefaultMemPool, 11020)            \
  X(cuCtxGetCurrent, 4000)                       \
  X(cuCtxSetCurrent, 4000)                       \
  X(cuCtxPushCurrent, 4000)                      \
  X(cuCtxPopCurrent, 4000)                       \
  X(cuCtxGetDevice, 2000)                        \
  X(cuCtxSynchronize, 2000)                      \
  X(cuCtxGetStreamPriorityRange, 5050)           \
  X(cuStreamCreateWithPriority, 5050)            \
  X(cuStreamDestroy, 4000)                       \
  X(cuStreamSynchronize, 2000)                   \
  X(cuStreamQuery, 2000)                         \
  X(cuStreamWaitEvent, 3020)                     \
  X(cuStreamGetCtx, 9020)                        \
  X(cuStreamGetPriority, 5050)                   \
  X(cuStreamGetFlags, 5050)                      \
  X(cuStreamBeginCapture, 10010)                 \
  X(cuStreamEndCapture, 10000)                   \
  X(cuStreamIsCapturing, 10000)                  \
  X(cuEventCreate, 2000)                         \
  X(cuEventDestroy, 4000)                        \
  X(cuEventRecord, 2000)                         \
  X(cuEventSynchronize, 2000)                    \
  X(cuEventQuery, 2000)                          \
  X(cuEventElapsedTime, 12080)                   \
  X(cuMemAllocAsync, 11020)                      \
  X(cuMemFreeAsync, 11020)                       \
  X(cuMemHostAlloc, 3020)                        \
  X(cuMemFreeHost, 2000)                         \
  X(cuMemcpyAsync, 4000)                         \
  X(cuMemsetD8Async, 3020)                       \
  X(cuMemGetInfo, 3020)                          \
  X(cuPointerGetAttribute, 4000)                 \
  X(cuMemGetAddressRange, 3020)                  \
  X(cuLibraryLoadData, 12000)                    \
  X(cuLibraryUnload, 12000)                      \
  X(cuLibraryGetKernel, 12000)                   \
  X(cuLibraryGetKernelCount, 12040)              \
  X(cuLibraryEnumerateKernels, 12040)            \
  X(cuKernelGetName, 12030)                      \
  X(cuKernelGetLibrary, 12050)                   \
  X(cuKernelGetFunction, 12000)                  \
  X(cuKernelGetAttribute, 12000)                 \
  X(cuKernelSetAttribute, 12000)                 \
  X(cuKernelGetParamInfo, 12040)                 \
  X(cuFuncGetAttribute, 2020)                    \
  X(cuFuncGetParamInfo, 12040)                   \
  X(cuFuncGetName, 12030)                        \
  X(cuFuncSetAttribute, 9000)                    \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) \
  X(cuOccupancyMaxPotentialBlockSize, 6050)      \
  X(cuOccupancyMaxActiveClusters, 11080)         \
  X(cuOccupancyMaxPotentialClusterSize, 11080)   \
  X(cuOccupancyAvailableDynamicSMemPerBlock, 11000) \
  X(cuLaunchKernel, 4000)                        \
  X(cuLaunchKernelEx, 11060)                     \
  X(cuGraphInstantiateWithFlags, 11040)          \
  X(cuGraphLaunch, 10000)                        \
  X(cuGraphDestroy, 10000)                       \
  X(cuGraphExecDestroy, 10000)                   \
  X(cuGraphGetNodes, 10000)                      \
  X(cuGraphNodeGetType, 10000)                   \
  X(cuGraphKernelNodeGetParams, 12000)           \
  X(cuGraphExecKernelNodeSetParams, 12000)       \
  X(cuGraphCreate, 10000)                        \
  X(cuUserObjectCreate, 11030)                   \
  X(cuUserObjectRelease, 11030)                  \
  X(cuUserObjectRetain, 11030)                   \
  X(cuGraphRetainUserObject, 11030)              \
  X(cuGraphReleaseUserObject, 11030)             \
  X(cuGraphNodeFindInClone, 10000)               \
  X(cuGraphAddKernelNode, 12000)                 \
  X(cuGraphAddNode, 12030)                       \
  X(cuGraphGetEdges, 12030)                      \
  X(cuGraphExecUpdate, 12000)                    \
  X(cuGraphUpload, 11010)                        \
  X(cuGraphDebugDotPrint, 11030)                 \
  X(cuGraphConditionalHandleCreate, 12030)       \
  X(cuGraphDestroyNode, 10000)                   \
  X(cuGraphAddDependencies, 12030)               \
  X(cuGraphRemoveDependencies, 12030)            \
  X(cuGraphChildGraphNodeGetGraph, 10000)        \
  X(cuGraphNodeSetParams, 12020)                 \
  X(cuGraphExecNodeSetParams, 12020)             \
  X(cuGraphNodeSetEnabled, 11060)                \
  X(cuGraphNodeGetEnabled, 11060)                \
  X(cuStreamBeginCaptureToGraph, 12030)          \
  X(cuStreamGetCaptureInfo, 12030)               \
  X(cuStreamUpdateCaptureDependencies, 12030)    \
  X(cuLaunchHostFunc, 10000)                     \
  X(cuMemsetD32Async, 3020)                      \
  X(cuMemsetD16Async, 3020)                      \
  X(cuTensorMapEncodeTiled, 12000)               \
  X(cuTensorMapEncodeIm2col, 12000)              \
  X(cuTensorMapReplaceAddress, 12000)             \
  X(cuDeviceGetMemPool, 11020)                   \
  X(cuDeviceCanAccessPeer, 4000)                 \
  X(cuCtxEnablePeerAccess, 4000)                 \
  X(cuCtxDisablePeerAccess, 4000)                \
  X(cuMemcpyPeerAsync, 4000)                     \
  X(cuMemPoolCreate, 11020)                      \
  X(cuMemPoolDestroy, 11020)                     \
  X(cuMemPoolTrimTo, 11020)                      \
  X(cuMemPoolGetAttribute, 11020)                \
  X(cuMemPoolSetAttribute, 11020)                \
  X(cuMemPoolSetAccess, 11020)                   \
  X(cuMemPoolGetAccess, 11020)                   \
  X(cuMemAllocFromPoolAsync, 11020)              \
  X(cuMemPoolExportToShareableHandle, 11020)     \
  X(cuMemPoolImportFromShareableHandle, 11020)   \
  X(cuMemPoolExportPointer, 11020)               \
  X(cuMemPoolImportPointer, 11020)               \
  X(cuMemAllocManaged, 6000)                     \
  X(cuMemFree, 3020)                             \
  X(cuMemPrefetchAsync, 12020)                   \
  X(cuMemAdvise, 12020)                          \
  X(cuMemRangeGetAttribute, 8000)               \
  X(cuMemPrefetchBatchAsync, 13000)             \
  X(cuMemDiscardBatchAsync, 13000)              \
  X(cuMemDiscardAndPrefetchBatchAsync, 13000)   \
  X(cuMemcpyBatchAsync, 13000)                  \
  X(cuMemGetAllocationGranularity, 10020)        \
  X(cuMemCreate, 10020)                          \
  X(cuMemRelease, 10020)                         \
  X(cuMemAddressReserve, 10020)                  \
  X(cuMemAddressFree, 10020)                     \
  X(cuMemMap, 10020)                             \
  X(cuMemUnmap, 10020)                           \
  X(cuMemSetAccess, 10020)                       \
  X(cuIpcGetEventHandle, 4010)                   \
  X(cuIpcOpenEventHandle, 4010)                  \
  X(cuArray3DCreate, 3020)                       \
  X(cuArrayDestroy, 2000)                        \
  X(cuMipmappedArrayCreate, 5000)                \
  X(cuMipmappedArrayGetLevel, 5000)              \
  X(cuMipmappedArrayDestroy, 5000)               \
  X(cuMemcpy3DAsync, 3020)                       \
  X(cuTexObjectCreate, 5000)                     \
  X(cuTexObjectDestroy, 5000)                    \
  X(cuSurfObjectCreate, 5000)                    \
  X(cuSurfObjectDestroy, 5000)                   \
  X(cuCheckpointProcessGetRestoreThreadId, 12080) \
  X(cuCheckpointProcessGetState, 12080)          \
  X(cuCheckpointProcessLock, 12080)              \
  X(cuCheckpointProcessCheckpoint, 12080)        \
  X(cuCheckpointProcessRestore, 12080)           \
  X(cuCheckpointProcessUnlock, 12080)          \
  X(cuDeviceGetPCIBusId, 4010)                   \
  /* green contexts (CUDA 12.4, the oldest driver nanocuda supports) */ \
  X(cuDeviceGetDevResource, 12040)               \
  X(cuDevSmResourceSplitByCount, 12040)          \
  X(cuDevResourceGenerateDesc, 12040)            \
  X(cuGreenCtxCreate, 12040)                     \
  X(cuGreenCtxDestroy, 12040)                    \
  X(cuCtxFromGreenCtx, 12040)                    \
  X(cuGreenCtxGetDevResource, 12040)             \
  X(cuCtxGetDevResource, 12040)                  \
  X(cuGreenCtxStreamCreate, 12050)              \
  /* graph memory (GraphMemoryResource) */      \
  X(cuDeviceGetGraphMemAttribute, 11040)         \
  X(cuDeviceSetGraphMemAttribute, 11040)         \
  X(cuDeviceGraphMemTrim, 11040)

// One typed function pointer per entry point. Filled by load_driver(); read-only after.
struct DriverApi {
#define NANOCUDA_DECLARE_POINTER(name, version) decltype(&::name) name = nullptr;
  NANOCUDA_DRIVER_ENTRY_POINTS(NANOCUDA_DECLARE_POINTER)
#undef NANOCUDA_DECLARE_POINTER
};

// What a slot holds when the installed driver lacks that entry point: a function of the
// same type returning CUDA_ERROR_NOT_SUPPORTED, so an older driver gives a clear error
// (the checked call names the missing function) instead of a call through a null pointer.
template <class F>
struct MissingEntryPoint;
template <class... Args>
struct MissingEntryPoint<CUresult (*)(Args...)> {
  static CUresult call(Args...) noexcept { return CUDA_ERROR_NOT_SUPPORTED; }
};

// False when the driver lacks the entry point held in `fn` (a slot of the table).
template <class F>
[[nodiscard]] bool entry_point_available(F fn) noexcept {
  return fn != nullptr && fn != static_cast<F>(&MissingEntryPoint<F>::call);
}

// Set once the table is complete; the fast path of driver() is one acquire load.
extern std::atomic<const DriverApi*> g_driver_table;

// Loads libcuda.so.1 (or $NANOCUDA_LIBCUDA), calls cuInit(0) and fills the table, once per
// process and thread-safely. Throws DriverNotFoundError if there is no usable driver; the
// failure is remembered, so later calls fail fast with the same message.
const DriverApi& load_driver();

// The table, loading it on first use. This is what every checked call goes through.
inline const DriverApi& driver() {
  if (const DriverApi* table = g_driver_table.load(std::memory_order_acquire)) [[likely]]
    return *table;
  return load_driver();
}

// The table if load_driver() has already succeeded, else nullptr. Never loads anything:
// used where loading would be wrong (destructors, error formatting).
const DriverApi* loaded_driver() noexcept;

// Where nanocuda looked for the driver and what it found, for `nanocuda info`.
const char* driver_library_path() noexcept;

// True when the loaded driver has no entry point `name` (its slot holds the stub).
bool driver_lacks(const char* name) noexcept;

}  // namespace nanocuda::detail
