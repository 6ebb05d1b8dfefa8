# The GPU backend as one interface target, flashprobe::gpu, plus flashprobe_gpu_sources():
# one source tree (.cu files) serves CUDA (nvcc) and HIP (hipcc as the C++ compiler, see docs/architecture.md).
add_library(flashprobe_gpu INTERFACE)
add_library(flashprobe::gpu ALIAS flashprobe_gpu)

if(FLASHPROBE_BACKEND STREQUAL "cuda")
  find_package(CUDAToolkit REQUIRED)
  target_link_libraries(flashprobe_gpu INTERFACE CUDA::cudart_static)
  target_compile_definitions(flashprobe_gpu INTERFACE FLASHPROBE_BACKEND_CUDA=1)
elseif(FLASHPROBE_BACKEND STREQUAL "hip")
  if(NOT DEFINED GPU_TARGETS)
    set(GPU_TARGETS "gfx90a;gfx940" CACHE STRING "AMD targets for the HIP build")
  endif()
  # find_package(hip) runs `hipcc --version`, which asks rocm_agent_enumerator for this machine's
  # GPU unless told the targets (a traceback where there is none).
  list(JOIN GPU_TARGETS "," _fp_hip_targets)
  set(ENV{HCC_AMDGPU_TARGET} "${_fp_hip_targets}")
  find_package(hip REQUIRED)
  # hipcc compiles every .cpp as HIP for a default target unless told the language: host-only
  # sources are plain C++ (-x c++); device sources get -x hip later on the line from hip::device.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-xc++>)
  # hipcc runs rocm_agent_enumerator, which prints a traceback on a machine without an AMD GPU,
  # whenever a command line names no target: every compile and every link names them.
  foreach(_arch ${GPU_TARGETS})
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:--offload-arch=${_arch}>)
    add_link_options($<$<LINK_LANGUAGE:CXX>:--offload-arch=${_arch}>)  # hipcc links C++; cc links the C plug-in
  endforeach()
  target_link_libraries(flashprobe_gpu INTERFACE hip::host)
  target_compile_definitions(flashprobe_gpu INTERFACE FLASHPROBE_BACKEND_HIP=1)
else()
  target_compile_definitions(flashprobe_gpu INTERFACE FLASHPROBE_BACKEND_OFF=1)
endif()

# Mark .cu sources of a target as device code for the active backend.
function(flashprobe_gpu_sources target)
  if(FLASHPROBE_BACKEND STREQUAL "hip")
    # Per source, not through hip::device: hip::device would compile every source of the target as
    # HIP, and ROCm 5.2's clang crashes on host-only code such as GoogleTest in C++20 device passes.
    # The targets (--offload-arch) are on every command line already (above).
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS -xhip)
  elseif(FLASHPROBE_BACKEND STREQUAL "cuda")
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
  endif()
  target_sources(${target} PRIVATE ${ARGN})
endfunction()
