# Unity builds for CI (FLASHPROBE_UNITY, default OFF; scripts/build turns it on with FLASHPROBE_CI_BUILD=1):
# the C++ sources of the targets below are compiled as one translation unit per batch of up to 16, so
# that the headers they share (nlohmann-json, RapidCheck, Eigen, GoogleTest and the standard library) are
# parsed and their templates instantiated once per batch instead of once per source. Measured (.ci/NOTES.md):
# flashprobe_gate 60.8 -> 18.2 CPU-s, test_oracle 54.9 -> 17.8 with the tests' precompiled header.
# Off by default: on the development machines a batch recompiles whole for a change to one source.
#
# A target is listed only where its sources compile together: helpers of the same name in the anonymous
# namespaces of two sources are one redefinition in a batch. The sources that clash stay out of the
# batches (_fp_unity_skip_<target>); test_kernels (many shared helper names) is not listed.
# A new clash stops CI's build with "redefinition of ...": rename the helper, or list the source here.
option(FLASHPROBE_UNITY "Compile the C++ sources of the targets listed in cmake/FlashprobeUnity.cmake as unity batches (CI)" OFF)
set(_fp_unity_targets flashprobe_core flashprobe_gate flashprobe_oracle flashprobe_probes flashprobe_kernels flashprobe
    test_oracle test_probes test_core test_probes_amd test_device_hold test_bench_grid test_kernels_gpu)
set(_fp_unity_skip_flashprobe_oracle oracle/src/backward.cpp oracle/src/grad_check.cpp oracle/src/simulated_backward.cpp)
set(_fp_unity_skip_flashprobe_probes probes/src/load_path.cpp probes/src/hardware_probe.cpp)
set(_fp_unity_skip_flashprobe_kernels kernels/src/bwd_runner.cpp)
set(_fp_unity_skip_flashprobe cli/cmd_run.cpp)
# The CLI's commands register themselves through a variable named `reg` in an anonymous namespace, one per
# source: in a batch each source's `reg` is renamed after the source (CMake's unique id per source).
set(_fp_unity_before_flashprobe "#define reg FLASHPROBE_UNITY_ID")
set(_fp_unity_after_flashprobe "#undef reg")

# Called once every target exists (the end of the top-level CMakeLists.txt). CMake 3.25 batches C++ only,
# and leaves out sources with compile options of their own: GPU sources are never in a batch (nvcc's, and
# the HIP tree's -xhip ones).
function(flashprobe_unity_builds)
  if(NOT FLASHPROBE_UNITY)
    return()
  endif()
  foreach(_t ${_fp_unity_targets})
    if(NOT TARGET ${_t})
      continue()
    endif()
    set_target_properties(${_t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH UNITY_BUILD_BATCH_SIZE 16)
    if(DEFINED _fp_unity_before_${_t})
      set_target_properties(${_t} PROPERTIES UNITY_BUILD_UNIQUE_ID FLASHPROBE_UNITY_ID
        UNITY_BUILD_CODE_BEFORE_INCLUDE "${_fp_unity_before_${_t}}" UNITY_BUILD_CODE_AFTER_INCLUDE "${_fp_unity_after_${_t}}")
    endif()
    foreach(_s ${_fp_unity_skip_${_t}})
      set_source_files_properties(${PROJECT_SOURCE_DIR}/${_s} TARGET_DIRECTORY ${_t} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endforeach()
  endforeach()
endfunction()
