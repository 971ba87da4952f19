# pydd_add_kernel_library(<target> <kernel.pydd> [OPTIONS <pyddc options>...])
#
# Compiles a pydd kernel with `pyddc --host=cpp` into lib<kernel>.a and
# <kernel>.h (in the build tree) and makes <target> a library that C++
# programs link: it carries the header's directory, the runtime headers, the
# compile options the runtime needs and OpenBLAS. The kernel is rebuilt when
# the .pydd file (or pyddc) changes; pyddc's compile cache makes a rebuild of
# unchanged source a copy.
#
# Used by the installed CMake package (pyddConfig.cmake, with an installed
# pyddc) and by this repository's own examples (with the pyddc it builds).
# Either sets, before including this file:
#   PYDD_PYDDC_COMMAND  what runs pyddc (a path, or the name of the target)
#   PYDD_PYDDC_DEPENDS  what a kernel build depends on besides its source
# and defines the target pydd::runtime.

function(pydd_add_kernel_library target source)
  cmake_parse_arguments(PARSE_ARGV 2 PYDD "" "" "OPTIONS")
  if(PYDD_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pydd_add_kernel_library: unexpected arguments: ${PYDD_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(src "${source}" ABSOLUTE)
  get_filename_component(module "${src}" NAME_WE)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/pydd_kernels/${target}")
  # An imported target's include directory must exist when it is configured.
  file(MAKE_DIRECTORY "${out}")
  add_custom_command(
    OUTPUT "${out}/lib${module}.a" "${out}/${module}.h"
    COMMAND ${PYDD_PYDDC_COMMAND} --host=cpp ${PYDD_OPTIONS} "${src}" -o "${out}"
    DEPENDS "${src}" ${PYDD_PYDDC_DEPENDS}
    COMMENT "pyddc --host=cpp ${PYDD_OPTIONS} ${module}.pydd"
    VERBATIM)
  add_custom_target(${target}_pyddc DEPENDS "${out}/lib${module}.a" "${out}/${module}.h")
  # The archive also holds the compiled part of the runtime (see
  # codegen/Toolchain.h), so a host links it and the runtime's interface.
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${out}/lib${module}.a"
    INTERFACE_INCLUDE_DIRECTORIES "${out}"
    INTERFACE_LINK_LIBRARIES pydd::runtime)
  # Followed by whatever links ${target}, since an imported target is not built.
  add_dependencies(${target} ${target}_pyddc)
endfunction()
