# One helper registers every test: flashprobe_add_test(NAME n SOURCES ... [LIBS ...] [LABELS cpu|gpu|slow ...]
# [GPU_SOURCES ...]). Each GoogleTest case becomes its own CTest test carrying the labels, so
# `ctest -L cpu` runs the CPU suite and the closing line counts individual cases.
include(GoogleTest)
# Extra compile flags for the test programs' own C++ sources (not the libraries they test), empty by
# default. CI passes -O1 (scripts/build with FLASHPROBE_CI_BUILD=1): g++ compiles the test sources in
# about two thirds of their -O3 time (hipcc: 0.77-0.93), and the code under test keeps the build
# type's flags (.ci/NOTES.md).
set(FLASHPROBE_TEST_CXX_FLAGS "" CACHE STRING "Extra compile flags for the tests' own C++ sources, e.g. -O1")
function(flashprobe_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;GPU_SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS cpu)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  if(T_GPU_SOURCES)
    flashprobe_gpu_sources(${T_NAME} ${T_GPU_SOURCES})
  endif()
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main flashprobe_warnings)
  if(FLASHPROBE_TEST_CXX_FLAGS)
    target_compile_options(${T_NAME} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${FLASHPROBE_TEST_CXX_FLAGS}>")
  endif()
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
