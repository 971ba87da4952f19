# `cmake --install <build> [--prefix <dir>]`: pyddc, the runtime headers and
# libraries, the precompiled runtime header and the CMake package
# (find_package(pydd)). An installed pyddc finds the rest relative to itself
# (codegen/InstallLayout.h), so any prefix works.

include(CMakePackageConfigHelpers)

install(TARGETS pyddc RUNTIME DESTINATION bin)
install(TARGETS pydd_runtime pydd_python ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
install(DIRECTORY "${CMAKE_SOURCE_DIR}/runtime/include/" DESTINATION include)
# The precompiled runtime.h per -O level, next to a copy of the header (the
# build tree has a link to it), as g++ looks for them.
install(DIRECTORY "${PYDD_PCH_DIR}/pydd/runtime.h.gch" DESTINATION lib/pydd/pch/pydd)
install(FILES "${CMAKE_SOURCE_DIR}/runtime/include/pydd/runtime.h" DESTINATION lib/pydd/pch/pydd)

write_basic_package_version_file("${CMAKE_BINARY_DIR}/pyddConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES
  "${CMAKE_SOURCE_DIR}/cmake/pyddConfig.cmake"
  "${CMAKE_SOURCE_DIR}/cmake/PyddKernelLibrary.cmake"
  "${CMAKE_BINARY_DIR}/pyddConfigVersion.cmake"
  DESTINATION lib/cmake/pydd)
