# One helper registers every test: flashprobe_add_test(NAME n SOURCES ... [LIBS ...] [LABELS cpu|gpu|slow ...]
# [GPU_SOURCES ...]). Each GoogleTest case becomes its own CTest test carrying the labels, so
# `ctest -L cpu` runs the CPU suite and the closing line counts individual cases.
include(GoogleTest)
# Extra compile flags for the test programs' own C++ sources (not the libraries they test), empty by
# default. CI passes -O1 (scripts/build with FLASHPROBE_CI_BUILD=1): g++ compiles the test sources in
# about two thirds of their -O3 time (hipcc: 0.77-0.93), and the code under test keeps the build
# type's flags (.ci/NOTES.md).
set(FLASHPROBE_TEST_CXX_FLAGS "" CACHE STRING "Extra compile flags for the tests' own C++ sources, e.g. -O1")
# A precompiled header for the test programs' own C++ sources, off by default (a PCH defeats the shared
# ccache of the development machines). CI turns it on (scripts/build with FLASHPROBE_CI_BUILD=1): it is
# built once, by flashprobe_test_pch, and every test program reuses it. The headers are the ones most
# test sources include (GoogleTest 83 of 92, nlohmann-json 29 directly or through the libraries' headers,
# the standard headers); a test source gets them whether or not it includes them (.ci/NOTES.md).
option(FLASHPROBE_TEST_PCH "Build the test programs with one precompiled header (GoogleTest, nlohmann-json, std)" OFF)
if(FLASHPROBE_TEST_PCH AND FLASHPROBE_BUILD_TESTS)
  file(WRITE ${PROJECT_BINARY_DIR}/flashprobe_test_pch.cpp "int main() { return 0; }\n")
  # An executable, compiled with a test program's flags (-fPIE, the warnings, GoogleTest's definitions,
  # FLASHPROBE_TEST_CXX_FLAGS): GCC and clang use a PCH only where those agree.
  add_executable(flashprobe_test_pch ${PROJECT_BINARY_DIR}/flashprobe_test_pch.cpp)
  target_link_libraries(flashprobe_test_pch PRIVATE GTest::gtest nlohmann_json::nlohmann_json flashprobe_warnings)
  if(FLASHPROBE_TEST_CXX_FLAGS)
    target_compile_options(flashprobe_test_pch PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${FLASHPROBE_TEST_CXX_FLAGS}>")
  endif()
  target_precompile_headers(flashprobe_test_pch PRIVATE
    <gtest/gtest.h> <nlohmann/json.hpp>
    <algorithm> <cmath> <cstdint> <cstring> <filesystem> <fstream> <functional> <map> <memory> <optional>
    <random> <set> <span> <sstream> <string> <unordered_map> <variant> <vector>)
endif()
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
  if(TARGET flashprobe_test_pch)
    # A source whose flags do not fit the header stops the build instead of compiling slowly unnoticed.
    target_precompile_headers(${T_NAME} REUSE_FROM flashprobe_test_pch)
    target_compile_options(${T_NAME} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:-Werror=invalid-pch>")
  endif()
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
