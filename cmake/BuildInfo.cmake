# Run at build time (not configure time) so the commit baked into records is the one actually built.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE FLASHPROBE_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(DEFINED ENV{FLASHPROBE_BUILD_COMMIT})
  # A copy of the tree on a lent GPU machine, whose .git (if any) is not this tree's:
  # scripts/gpu/build-there passes the commit scripts/gpu/stage-deps wrote from the real checkout.
  set(FLASHPROBE_COMMIT "$ENV{FLASHPROBE_BUILD_COMMIT}")
elseif(NOT FLASHPROBE_COMMIT)
  set(FLASHPROBE_COMMIT unknown)
elseif(_dirty)
  set(FLASHPROBE_COMMIT "${FLASHPROBE_COMMIT}-dirty")
endif()
configure_file(${IN} ${OUT}.tmp @ONLY)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
