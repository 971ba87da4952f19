# The pydd CMake package (installed by cmake/Install.cmake):
#
#   find_package(pydd REQUIRED)
#   pydd_add_kernel_library(kmeans kmeans.pydd OPTIONS -O3)
#   target_link_libraries(app PRIVATE kmeans)
#
# Defines pydd::pyddc (the compiler), pydd::runtime (the runtime headers and
# library, with the compile options and OpenBLAS they need) and the function
# pydd_add_kernel_library (PyddKernelLibrary.cmake). Everything is found
# relative to this file, so the installation can be moved.

get_filename_component(_pydd_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET pydd::pyddc)
  add_executable(pydd::pyddc IMPORTED)
  set_target_properties(pydd::pyddc PROPERTIES IMPORTED_LOCATION "${_pydd_prefix}/bin/pyddc")

  find_library(PYDD_OPENBLAS_LIBRARY openblas)
  if(NOT PYDD_OPENBLAS_LIBRARY)
    set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
    set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE "pydd kernels need OpenBLAS (Debian: libopenblas-dev)")
    return()
  endif()
  add_library(pydd::runtime STATIC IMPORTED)
  set_target_properties(pydd::runtime PROPERTIES
    IMPORTED_LOCATION "${_pydd_prefix}/lib/libpydd_runtime.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_pydd_prefix}/include"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    # What `pyddc --cxxflags` prints: wrapping integers and no FMA
    # contraction, as the kernels were compiled, and OpenMP (pfor, tasks).
    INTERFACE_COMPILE_OPTIONS "-fwrapv;-ffp-contract=off;-fopenmp"
    INTERFACE_LINK_OPTIONS "-fopenmp"
    INTERFACE_LINK_LIBRARIES "${PYDD_OPENBLAS_LIBRARY};m")
endif()

set(PYDD_PYDDC_COMMAND "${_pydd_prefix}/bin/pyddc")
set(PYDD_PYDDC_DEPENDS "${_pydd_prefix}/bin/pyddc")
include("${CMAKE_CURRENT_LIST_DIR}/PyddKernelLibrary.cmake")
