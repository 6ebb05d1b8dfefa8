# AMD device-code check: Debian's clang-19 compiles AMD device code (`-x hip --cuda-device-only`) for
# the targets users own (gfx1100, gfx1201, gfx942, gfx90a), which the packaged ROCm 5.2 compiler
# does not know. The assembly is kept under ${PROJECT_BINARY_DIR}/amd/<target>/ for the checks:
# tools/amd_device_check.py asserts which instructions are present/absent and extracts the
# resource usage (VGPR/AGPR/SGPR, LDS, scratch, waves per SIMD) from the code-object metadata.
#
#   flashprobe_amd_device_code(NAME probes_amd_rdna3 SOURCES probes/amd/rdna3_wmma.cu
#                              TARGETS gfx1100 gfx1201 gfx942 gfx90a
#                              [OPTIONS -mwavefrontsize64] [DEFINES X=1]
#                              EXPECT "gfx1100:v_wmma_f32_16x16x16_f16" "gfx90a:!v_wmma"
#                                     "gfx1100@GFX11_WMMA_16x16x16_F16F16_W32_OPSELILb1E:op_sel:\\[0,0,1\\]")
# adds the build target amd_<NAME> (part of `all`) and the CTest test amd_check_<NAME> (label cpu).
# EXPECT entries are TARGET:REGEX (whole unit) or TARGET@KERNEL_REGEX:REGEX (only the body of the
# kernels whose mangled name matches KERNEL_REGEX); a REGEX starting with '!' must be absent.
# OPTIONS are extra compiler flags, e.g. -mwavefrontsize64 for wave64 code objects on RDNA.
find_program(FLASHPROBE_CLANG19 NAMES clang-19 clang++-19)
find_package(Python3 COMPONENTS Interpreter)
set(FLASHPROBE_AMD_TARGETS gfx1100 gfx1201 gfx942 gfx90a CACHE STRING "AMD targets for the device-code check")

if(NOT FLASHPROBE_CLANG19)
  message(WARNING "clang-19 not found: the AMD device-code check is skipped (apt-get install clang-19)")
endif()

function(flashprobe_amd_device_code)
  cmake_parse_arguments(A "" "NAME" "SOURCES;TARGETS;EXPECT;DEFINES;OPTIONS" ${ARGN})
  if(NOT FLASHPROBE_CLANG19 OR NOT FLASHPROBE_AMD_DEVICE_CHECK)
    return()
  endif()
  if(NOT A_TARGETS)
    set(A_TARGETS ${FLASHPROBE_AMD_TARGETS})
  endif()
  # Header changes must rebuild the assembly: Ninja reads clang's depfile, Makefiles scan includes.
  set(_outputs)
  foreach(_tgt ${A_TARGETS})
    foreach(_src ${A_SOURCES})
      get_filename_component(_stem ${_src} NAME_WE)
      set(_out ${PROJECT_BINARY_DIR}/amd/${_tgt}/${A_NAME}.${_stem}.s)
      if(CMAKE_GENERATOR MATCHES "Ninja")
        set(_depopt DEPFILE ${_out}.d)
      else()
        set(_depopt IMPLICIT_DEPENDS CXX ${PROJECT_SOURCE_DIR}/${_src})
      endif()
      set(_defs)
      foreach(_d ${A_DEFINES})
        list(APPEND _defs -D${_d})
      endforeach()
      add_custom_command(OUTPUT ${_out}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/amd/${_tgt}
        COMMAND ${FLASHPROBE_CLANG19} -x hip --cuda-device-only --offload-arch=${_tgt} -nogpulib -O3 -std=c++20
                -DFLASHPROBE_AMD_DEVICE_CHECK=1 ${_defs} ${A_OPTIONS}
                -I${PROJECT_SOURCE_DIR}/core/include -I${PROJECT_SOURCE_DIR}/atoms/include
                -I${PROJECT_SOURCE_DIR}/probes/amd/include
                -I${PROJECT_SOURCE_DIR}/kernels/include -I${PROJECT_SOURCE_DIR}/kernels
                -MD -MF ${_out}.d -S -o ${_out} ${PROJECT_SOURCE_DIR}/${_src}
        DEPENDS ${PROJECT_SOURCE_DIR}/${_src}
        ${_depopt}
        COMMENT "clang-19 ${_tgt}: ${_src}" VERBATIM)
      list(APPEND _outputs ${_out})
    endforeach()
  endforeach()
  add_custom_target(amd_${A_NAME} ALL DEPENDS ${_outputs})
  if(FLASHPROBE_BUILD_TESTS AND Python3_Interpreter_FOUND)
    set(_expect_args)
    foreach(_e ${A_EXPECT})
      list(APPEND _expect_args --expect ${_e})
    endforeach()
    add_test(NAME amd_check_${A_NAME}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/amd_device_check.py
              --name ${A_NAME} --asm-dir ${PROJECT_BINARY_DIR}/amd --targets ${A_TARGETS}
              --resources-out ${PROJECT_BINARY_DIR}/amd/resources_${A_NAME}.json ${_expect_args})
    set_tests_properties(amd_check_${A_NAME} PROPERTIES LABELS "cpu;amd")
  endif()
endfunction()

