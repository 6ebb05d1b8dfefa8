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
  # The targets of every device source except the AMD probes' (kernels, mutants, the tests' and
  # plug-ins' device sources): GPU_TARGETS unless set to a part of it. The AMD probes keep every target
  # (flashprobe_gpu_sources ALL_TARGETS): their code objects are checked (probes/amd). CI sets one
  # (scripts/build, FLASHPROBE_CI_BUILD=1): no GPU runs there, and the clang-19 device-code check
  # covers the kernels for four targets (.ci/NOTES.md).
  set(FLASHPROBE_HIP_KERNEL_TARGETS "" CACHE STRING "AMD targets for the HIP build's device code other than the AMD probes' (default: GPU_TARGETS)")
  set(FLASHPROBE_HIP_KERNEL_ARCHS ${GPU_TARGETS})
  set(_fp_hip_dropped_targets)
  if(FLASHPROBE_HIP_KERNEL_TARGETS)
    foreach(_arch ${FLASHPROBE_HIP_KERNEL_TARGETS})
      if(NOT _arch IN_LIST GPU_TARGETS)
        message(FATAL_ERROR "FLASHPROBE_HIP_KERNEL_TARGETS='${FLASHPROBE_HIP_KERNEL_TARGETS}': '${_arch}' is not one of GPU_TARGETS (${GPU_TARGETS})")
      endif()
    endforeach()
    set(FLASHPROBE_HIP_KERNEL_ARCHS ${FLASHPROBE_HIP_KERNEL_TARGETS})
    foreach(_arch ${GPU_TARGETS})
      if(NOT _arch IN_LIST FLASHPROBE_HIP_KERNEL_TARGETS)
        list(APPEND _fp_hip_dropped_targets --no-offload-arch=${_arch})
      endif()
    endforeach()
  endif()
  # hipcc links a program in about 2 CPU-s where the clang++ it calls takes 0.3: hipcc.pl unpacks every
  # static library on the line and runs file and readelf on each member, looking for offload bundles,
  # which a build without -fgpu-rdc (this one) never makes. ON links the programs with that clang++
  # (HIPCC_VERBOSE names it) and hipcc's own link line around them, in hipcc's order: the order decides
  # which runtime's f16 conversions the tests get (.ci/NOTES.md). CI turns it on (scripts/build).
  option(FLASHPROBE_HIP_LINK_WITH_CLANG "Link the HIP build's programs with the clang++ hipcc calls instead of hipcc" OFF)
  if(FLASHPROBE_HIP_LINK_WITH_CLANG)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env HIPCC_VERBOSE=1 ${CMAKE_CXX_COMPILER} --version
                    OUTPUT_VARIABLE _fp_hipcc_out ERROR_VARIABLE _fp_hipcc_out)
    if(NOT _fp_hipcc_out MATCHES "hipcc-cmd: ([^ \n]+)")
      message(FATAL_ERROR "FLASHPROBE_HIP_LINK_WITH_CLANG: '${CMAKE_CXX_COMPILER} --version' with HIPCC_VERBOSE=1 names no clang++ (hipcc-cmd: line)")
    endif()
    set(_fp_hip_clang ${CMAKE_MATCH_1})
    execute_process(COMMAND ${_fp_hip_clang} --print-libgcc-file-name --rtlib=compiler-rt
                    OUTPUT_VARIABLE _fp_hip_builtins OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(CMAKE_CXX_LINK_EXECUTABLE "${_fp_hip_clang} -Wno-unused-command-line-argument -lgcc_s -lgcc -lpthread -lm -lrt <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES> -lamdhip64 ${_fp_hip_builtins}")
  endif()
  target_link_libraries(flashprobe_gpu INTERFACE hip::host)
  target_compile_definitions(flashprobe_gpu INTERFACE FLASHPROBE_BACKEND_HIP=1)
else()
  target_compile_definitions(flashprobe_gpu INTERFACE FLASHPROBE_BACKEND_OFF=1)
endif()

# Mark .cu sources of a target as device code for the active backend:
# flashprobe_gpu_sources(target [ALL_TARGETS] sources...). In HIP builds ALL_TARGETS compiles them for
# every GPU_TARGETS entry (the probes, whose code objects are checked), else for
# FLASHPROBE_HIP_KERNEL_TARGETS (above).
function(flashprobe_gpu_sources target)
  cmake_parse_arguments(G "ALL_TARGETS" "" "" ${ARGN})
  set(_srcs ${G_UNPARSED_ARGUMENTS})
  if(FLASHPROBE_BACKEND STREQUAL "hip")
    # Per source, not through hip::device: hip::device would compile every source of the target as
    # HIP, and ROCm 5.2's clang crashes on host-only code such as GoogleTest in C++20 device passes.
    # The targets (--offload-arch) are on every command line already (above).
    set(_opts -xhip)
    if(NOT G_ALL_TARGETS)
      list(APPEND _opts ${_fp_hip_dropped_targets})
    endif()
    # No precompiled header (FLASHPROBE_TEST_PCH): it is host C++, these are HIP.
    set_source_files_properties(${_srcs} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "${_opts}"
                                SKIP_PRECOMPILE_HEADERS ON)
  elseif(FLASHPROBE_BACKEND STREQUAL "cuda")
    set_source_files_properties(${_srcs} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
  endif()
  target_sources(${target} PRIVATE ${_srcs})
endfunction()
