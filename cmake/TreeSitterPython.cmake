# Fetches the tree-sitter-python grammar (npm package, generated C parser)
# into the build tree at configure time and builds it as a static library.
# The grammar's sources are third-party code: they are never committed.
set(PYDD_TS_PYTHON_VERSION "0.23.6" CACHE STRING "tree-sitter-python npm package version")
set(_ts_dir "${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${PYDD_TS_PYTHON_VERSION}")

if(NOT EXISTS "${_ts_dir}/package/src/parser.c")
  find_program(NPM_EXECUTABLE npm REQUIRED)
  file(MAKE_DIRECTORY "${_ts_dir}")
  message(STATUS "Fetching tree-sitter-python ${PYDD_TS_PYTHON_VERSION} from the npm registry")
  execute_process(
    COMMAND "${NPM_EXECUTABLE}" pack "tree-sitter-python@${PYDD_TS_PYTHON_VERSION}" --silent
    WORKING_DIRECTORY "${_ts_dir}"
    OUTPUT_VARIABLE _ts_tarball OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _ts_result)
  if(NOT _ts_result EQUAL 0)
    message(FATAL_ERROR "npm pack tree-sitter-python@${PYDD_TS_PYTHON_VERSION} failed")
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E tar xzf "${_ts_tarball}" package/src
    WORKING_DIRECTORY "${_ts_dir}"
    RESULT_VARIABLE _ts_result)
  if(NOT _ts_result EQUAL 0 OR NOT EXISTS "${_ts_dir}/package/src/parser.c")
    message(FATAL_ERROR "could not unpack ${_ts_dir}/${_ts_tarball}")
  endif()
endif()

add_library(tree_sitter_python STATIC
  "${_ts_dir}/package/src/parser.c"
  "${_ts_dir}/package/src/scanner.c")
target_include_directories(tree_sitter_python PRIVATE "${_ts_dir}/package/src")
set_target_properties(tree_sitter_python PROPERTIES POSITION_INDEPENDENT_CODE ON)
# Generated code: its warnings are not ours to fix.
target_compile_options(tree_sitter_python PRIVATE -w)
