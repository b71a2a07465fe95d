# Finds cuda.h: in the CUDA toolkit when there is one, else in NVIDIA's nvidia-cuda-runtime pip package.
#
# nanocuda links no CUDA library (it dlopens the driver, NVRTC and nvJitLink), so cuda.h is
# all a build needs. Order:
#   1. -DCudaHeaders_INCLUDE_DIR=<dir holding cuda.h>, if given;
#   2. the CUDA toolkit (find_package(CUDAToolkit): nvcc on PATH, CUDAToolkit_ROOT,
#      $CUDA_PATH, /usr/local/cuda);
#   3. the nvidia-cuda-runtime pip package importable by Python (nvidia/cu13/include;
#      nvidia/cuda_runtime/include for CUDA 12's layout): Python_EXECUTABLE if set, else
#      the python3 found first. pip's isolated builds install it as a build requirement.
# Defines:
#   CudaHeaders_FOUND, CudaHeaders_INCLUDE_DIR, CudaHeaders_VERSION (from CUDA_VERSION),
#   CudaHeaders_SOURCE ("toolkit", "pip" or "given"),
#   CudaHeaders_TOOLKIT_LIBRARY_DIR (the toolkit's library folder; empty without one),
#   and the imported target nanocuda::cuda_headers (include directories only).
include(FindPackageHandleStandardArgs)

set(CudaHeaders_SOURCE "given")
set(CudaHeaders_TOOLKIT_LIBRARY_DIR "")
set(_cuda_headers_extra "")

if(NOT CudaHeaders_INCLUDE_DIR)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    foreach(_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
      if(EXISTS "${_dir}/cuda.h")
        set(CudaHeaders_INCLUDE_DIR "${_dir}")
        set(CudaHeaders_SOURCE "toolkit")
        break()
      endif()
    endforeach()
  endif()
endif()

if(NOT CudaHeaders_INCLUDE_DIR)
  if(NOT Python_EXECUTABLE)
    find_program(_cuda_headers_python NAMES python3 python)
    set(_python "${_cuda_headers_python}")
  else()
    set(_python "${Python_EXECUTABLE}")
  endif()
  if(_python)
    # nvidia is a namespace package: every site-packages may hold part of it.
    execute_process(
      COMMAND "${_python}" -c [=[
import importlib.util, os
spec = importlib.util.find_spec("nvidia")
for root in (spec.submodule_search_locations if spec else []):
    for sub in ("cu13/include", "cuda_runtime/include"):
        if os.path.isfile(os.path.join(root, sub, "cuda.h")):
            print(os.path.realpath(os.path.join(root, sub)), end="")
            raise SystemExit(0)
]=]
      OUTPUT_VARIABLE _pip_include RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0 AND _pip_include)
      set(CudaHeaders_INCLUDE_DIR "${_pip_include}")
      set(CudaHeaders_SOURCE "pip")
    endif()
  endif()
endif()

if(CudaHeaders_INCLUDE_DIR AND EXISTS "${CudaHeaders_INCLUDE_DIR}/cuda.h")
  file(STRINGS "${CudaHeaders_INCLUDE_DIR}/cuda.h" _version_line
       REGEX "^#define CUDA_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CUDA_VERSION ([0-9]+).*" "\\1" _version "${_version_line}")
  math(EXPR _major "${_version} / 1000")
  math(EXPR _minor "${_version} % 1000 / 10")
  set(CudaHeaders_VERSION "${_major}.${_minor}")
  if(CudaHeaders_SOURCE STREQUAL "toolkit")
    set(CudaHeaders_TOOLKIT_LIBRARY_DIR "${CUDAToolkit_LIBRARY_DIR}")
  endif()
endif()

find_package_handle_standard_args(CudaHeaders
  REQUIRED_VARS CudaHeaders_INCLUDE_DIR
  VERSION_VAR CudaHeaders_VERSION
  REASON_FAILURE_MESSAGE
    "cuda.h not found: install the CUDA toolkit, or `pip install nvidia-cuda-runtime` for the Python that CMake runs, or pass -DCudaHeaders_INCLUDE_DIR=<folder holding cuda.h>")

if(CudaHeaders_FOUND AND NOT TARGET nanocuda::cuda_headers)
  add_library(nanocuda::cuda_headers INTERFACE IMPORTED)
  set_target_properties(nanocuda::cuda_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CudaHeaders_INCLUDE_DIR}")
endif()
