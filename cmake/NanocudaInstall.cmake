# `cmake --install`: headers, libnanocuda.a and a package config, for find_package(nanocuda).
#
# Off inside pip builds (scikit-build-core sets SKBUILD): a wheel carries only the Python
# package; the C++ SDK is installed from a CMake build.
if(DEFINED SKBUILD)
  set(_nanocuda_install_default OFF)
else()
  set(_nanocuda_install_default ON)
endif()
option(NANOCUDA_INSTALL "Install headers, the library and the CMake package" ${_nanocuda_install_default})
if(NOT NANOCUDA_INSTALL)
  return()
endif()

include(CMakePackageConfigHelpers)
set(NANOCUDA_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/nanocuda")

# Host headers (.h, .inc) and the kernel-side headers (nanocuda/device/*.cuh) alike.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/nanocuda"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h" PATTERN "*.inc" PATTERN "*.cuh")
install(TARGETS nanocuda EXPORT nanocudaTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT nanocudaTargets NAMESPACE nanocuda:: DESTINATION "${NANOCUDA_CMAKE_DIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/nanocudaConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/nanocudaConfig.cmake" INSTALL_DESTINATION "${NANOCUDA_CMAKE_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/nanocudaConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/nanocudaConfig.cmake"
  "${PROJECT_BINARY_DIR}/nanocudaConfigVersion.cmake"
  # The consumer finds cuda.h the way nanocuda's own build did (toolkit, else pip).
  "${PROJECT_SOURCE_DIR}/cmake/FindCudaHeaders.cmake"
  DESTINATION "${NANOCUDA_CMAKE_DIR}")
