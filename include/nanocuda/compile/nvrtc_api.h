// The NVRTC and nvJitLink entry points nanocuda uses, as tables dlopen'ed on first use.
//
// Neither library is linked at build time nor loaded at import: the first compile or link
// finds it (see library_search.h for the order) and fills the table once per process.
#pragma once

#include "nanocuda/compile/nvrtc_decls.h"

#include <string>

namespace nanocuda::detail {

// X(name): NVRTC's C API has had stable unversioned symbols since CUDA 11.
#define NANOCUDA_NVRTC_ENTRY_POINTS(X) \
  X(nvrtcGetErrorString)               \
  X(nvrtcVersion)                      \
  X(nvrtcCreateProgram)                \
  X(nvrtcDestroyProgram)               \
  X(nvrtcCompileProgram)               \
  X(nvrtcGetPTXSize)                   \
  X(nvrtcGetPTX)                       \
  X(nvrtcGetCUBINSize)                 \
  X(nvrtcGetCUBIN)                     \
  X(nvrtcGetLTOIRSize)                 \
  X(nvrtcGetLTOIR)                     \
  X(nvrtcGetProgramLogSize)            \
  X(nvrtcGetProgramLog)                \
  X(nvrtcAddNameExpression)            \
  X(nvrtcGetLoweredName)

// X(name, symbol): nvJitLink.h maps each call to a symbol versioned by a CUDA release
// (`__nvJitLinkCreate_13_0`); the signatures are the same in 12.x and 13.x, only the suffix
// differs. `symbol` gives the C type; the loader binds the suffix of the library it found
// (its own `_<major>_<minor>`, else the newest older one it exports), so one build links
// with nvJitLink 12 and 13 alike.
#define NANOCUDA_NVJITLINK_ENTRY_POINTS(X)                          \
  X(nvJitLinkCreate, __nvJitLinkCreate_13_0)                        \
  X(nvJitLinkDestroy, __nvJitLinkDestroy_13_0)                      \
  X(nvJitLinkAddData, __nvJitLinkAddData_13_0)                      \
  X(nvJitLinkComplete, __nvJitLinkComplete_13_0)                    \
  X(nvJitLinkGetLinkedCubinSize, __nvJitLinkGetLinkedCubinSize_13_0) \
  X(nvJitLinkGetLinkedCubin, __nvJitLinkGetLinkedCubin_13_0)        \
  X(nvJitLinkGetLinkedPtxSize, __nvJitLinkGetLinkedPtxSize_13_0)    \
  X(nvJitLinkGetLinkedPtx, __nvJitLinkGetLinkedPtx_13_0)            \
  X(nvJitLinkGetErrorLogSize, __nvJitLinkGetErrorLogSize_13_0)      \
  X(nvJitLinkGetErrorLog, __nvJitLinkGetErrorLog_13_0)              \
  X(nvJitLinkGetInfoLogSize, __nvJitLinkGetInfoLogSize_13_0)        \
  X(nvJitLinkGetInfoLog, __nvJitLinkGetInfoLog_13_0)

// X(name): libNVVM's C API, unversioned symbols.
#define NANOCUDA_NVVM_ENTRY_POINTS(X) \
  X(nvvmGetErrorString)               \
  X(nvvmVersion)                      \
  X(nvvmCreateProgram)                \
  X(nvvmDestroyProgram)               \
  X(nvvmAddModuleToProgram)           \
  X(nvvmLazyAddModuleToProgram)       \
  X(nvvmCompileProgram)               \
  X(nvvmGetCompiledResultSize)        \
  X(nvvmGetCompiledResult)            \
  X(nvvmGetProgramLogSize)            \
  X(nvvmGetProgramLog)

struct NvrtcApi {
#define NANOCUDA_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  NANOCUDA_NVRTC_ENTRY_POINTS(NANOCUDA_DECLARE_POINTER)
#undef NANOCUDA_DECLARE_POINTER
  std::string path;      // the library file loaded
  std::string include;   // the matching toolkit include dir (holding cuda.h), or empty
  std::string cccl_include;  // the folder holding cuda/std (libcu++), or empty
  int version = 0;       // major * 1000 + minor * 10
  std::string builtins_error;  // why libnvrtc-builtins beside it did not load, or empty
};

struct NvJitLinkApi {
#define NANOCUDA_DECLARE_POINTER(name, symbol) decltype(&::symbol) name = nullptr;
  NANOCUDA_NVJITLINK_ENTRY_POINTS(NANOCUDA_DECLARE_POINTER)
#undef NANOCUDA_DECLARE_POINTER
  std::string path;
  int version = 0;     // major * 1000 + minor * 10, from nvJitLinkVersion
  std::string suffix;  // the symbol version bound, e.g. "_12_9"
};

struct NvvmApi {
#define NANOCUDA_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  NANOCUDA_NVVM_ENTRY_POINTS(NANOCUDA_DECLARE_POINTER)
#undef NANOCUDA_DECLARE_POINTER
  std::string path;
  std::string libdevice;  // nvvm/libdevice/libdevice.10.bc next to it, or empty
};

// Loads NVRTC ($NANOCUDA_NVRTC first) once per process; throws ToolkitNotFoundError,
// remembering the failure so later calls fail fast.
const NvrtcApi& nvrtc();
// Loads nvJitLink ($NANOCUDA_NVJITLINK first) the same way.
const NvJitLinkApi& nvjitlink();
// Loads libNVVM ($NANOCUDA_NVVM first, then the toolkit's nvvm/lib64, then the library
// search of library_search.h; pip package nvidia-nvvm) the same way.
const NvvmApi& nvvm();

}  // namespace nanocuda::detail
