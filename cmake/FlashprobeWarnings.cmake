# Warnings applied privately to flashprobe's own targets (never to users of them).
add_library(flashprobe_warnings INTERFACE)
target_compile_options(flashprobe_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr -Xcudafe=--display_error_number>)
if(FLASHPROBE_BACKEND STREQUAL "hip")
  # ROCm 5.2's headers trip -Wpedantic on their own extensions.
  target_compile_options(flashprobe_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-pedantic -Wno-gnu-zero-variadic-macro-arguments>)
endif()
