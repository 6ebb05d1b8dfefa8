# One helper registers every test: flashprobe_add_test(NAME n SOURCES ... [LIBS ...] [LABELS cpu|gpu|slow ...]
# [GPU_SOURCES ...]). Each GoogleTest case becomes its own CTest test carrying the labels, so
# `ctest -L cpu` runs the CPU suite and the closing line counts individual cases.
include(GoogleTest)
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
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
