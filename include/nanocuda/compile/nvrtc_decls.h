// The NVRTC and nvJitLink C functions nanocuda calls, declared here: the build needs only cuda.h.
//
// Why our own declarations: both libraries are dlopen'ed, so only the signatures matter, and
// they are a stable C ABI (NVRTC's names since CUDA 11; nvJitLink's symbols carry the
// release they were introduced in, and newer libraries keep exporting the old ones). Taking
// them from <nvrtc.h>/<nvJitLink.h> made the build need the toolkit (or two ~50 MB pip
// packages), and a newer nvJitLink.h no longer declares the _13_0 symbols we bind.
// Where the real headers were included first, theirs are used.
#pragma once

#include <cstddef>
#include <cstdint>

#if !defined(__NVRTC_H__)
extern "C" {
// Fixed underlying type: every code NVRTC returns stays a valid value (only SUCCESS is
// named here; messages come from nvrtcGetErrorString).
enum nvrtcResult : int { NVRTC_SUCCESS = 0 };
typedef struct _nvrtcProgram* nvrtcProgram;

const char* nvrtcGetErrorString(nvrtcResult result);
nvrtcResult nvrtcVersion(int* major, int* minor);
nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name,
                               int numHeaders, const char* const* headers,
                               const char* const* includeNames);
nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog);
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options);
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t* ptxSizeRet);
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char* ptx);
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* cubinSizeRet);
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin);
nvrtcResult nvrtcGetLTOIRSize(nvrtcProgram prog, size_t* LTOIRSizeRet);
nvrtcResult nvrtcGetLTOIR(nvrtcProgram prog, char* LTOIR);
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* logSizeRet);
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log);
nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char* const name_expression);
nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char* const name_expression,
                                const char** lowered_name);
}  // extern "C"
#endif

#if !defined(nvJitLink_INCLUDED)
extern "C" {
enum nvJitLinkResult : int { NVJITLINK_SUCCESS = 0 };
// The input kinds nanocuda passes; values are nvJitLink's.
enum nvJitLinkInputType : int {
  NVJITLINK_INPUT_NONE = 0,
  NVJITLINK_INPUT_CUBIN = 1,
  NVJITLINK_INPUT_PTX = 2,
  NVJITLINK_INPUT_LTOIR = 3,
  NVJITLINK_INPUT_FATBIN = 4,
  NVJITLINK_INPUT_OBJECT = 5,
  NVJITLINK_INPUT_LIBRARY = 6,
  NVJITLINK_INPUT_ANY = 10,
};
typedef struct nvJitLink* nvJitLinkHandle;

nvJitLinkResult __nvJitLinkCreate_13_0(nvJitLinkHandle* handle, uint32_t numOptions,
                                       const char* const* options);
nvJitLinkResult __nvJitLinkDestroy_13_0(nvJitLinkHandle* handle);
nvJitLinkResult __nvJitLinkAddData_13_0(nvJitLinkHandle handle, nvJitLinkInputType inputType,
                                        const void* data, size_t size, const char* name);
nvJitLinkResult __nvJitLinkComplete_13_0(nvJitLinkHandle handle);
nvJitLinkResult __nvJitLinkGetLinkedCubinSize_13_0(nvJitLinkHandle handle, size_t* size);
nvJitLinkResult __nvJitLinkGetLinkedCubin_13_0(nvJitLinkHandle handle, void* cubin);
nvJitLinkResult __nvJitLinkGetLinkedPtxSize_13_0(nvJitLinkHandle handle, size_t* size);
nvJitLinkResult __nvJitLinkGetLinkedPtx_13_0(nvJitLinkHandle handle, char* ptx);
nvJitLinkResult __nvJitLinkGetErrorLogSize_13_0(nvJitLinkHandle handle, size_t* size);
nvJitLinkResult __nvJitLinkGetErrorLog_13_0(nvJitLinkHandle handle, char* log);
nvJitLinkResult __nvJitLinkGetInfoLogSize_13_0(nvJitLinkHandle handle, size_t* size);
nvJitLinkResult __nvJitLinkGetInfoLog_13_0(nvJitLinkHandle handle, char* log);
nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor);
}  // extern "C"
#endif

// libNVVM (NVVM IR -> PTX / LTO-IR). nvvm.h ships with the toolkit's nvvm/ folder only.
#if !defined(__NVVM_H__)
extern "C" {
enum nvvmResult : int { NVVM_SUCCESS = 0 };
typedef struct _nvvmProgram* nvvmProgram;

const char* nvvmGetErrorString(nvvmResult result);
nvvmResult nvvmVersion(int* major, int* minor);
nvvmResult nvvmCreateProgram(nvvmProgram* prog);
nvvmResult nvvmDestroyProgram(nvvmProgram* prog);
nvvmResult nvvmAddModuleToProgram(nvvmProgram prog, const char* buffer, size_t size, const char* name);
nvvmResult nvvmLazyAddModuleToProgram(nvvmProgram prog, const char* buffer, size_t size, const char* name);
nvvmResult nvvmCompileProgram(nvvmProgram prog, int numOptions, const char** options);
nvvmResult nvvmGetCompiledResultSize(nvvmProgram prog, size_t* bufferSizeRet);
nvvmResult nvvmGetCompiledResult(nvvmProgram prog, char* buffer);
nvvmResult nvvmGetProgramLogSize(nvvmProgram prog, size_t* bufferSizeRet);
nvvmResult nvvmGetProgramLog(nvvmProgram prog, char* buffer);
}  // extern "C"
#endif
