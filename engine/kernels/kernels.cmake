# The kernel library's sources, included from engine/CMakeLists.txt (paths
# are relative to engine/). The ISA-neutral files build for the target's
# baseline; each ISA's files are listed by samebits_kernel_isa() with the
# processor they build for and the compiler flags they alone get. Each ISA
# file exports only a table function (README.md), so its flags cannot leak
# into baseline code; tests/kernels/isa_symbols_test.sh checks every file
# listed here, with its flags, from the list this writes.
#
# Adding an ISA: one samebits_kernel_isa() line below (and its entry in
# dispatch.cc's kIsas).

set(kernels_sources
  kernels/bandwidth.cc
  kernels/dispatch.cc
  kernels/int8_repack.cc
  kernels/int8_rows.cc
  kernels/stream_ahead.cc
  kernels/matmul_scalar.cc
  kernels/test_only_table.cc
)
set(samebits_isa_sources_list "")

# samebits_kernel_isa(NAME PROCESSOR x86|arm64 [FLAGS flag...] SOURCES file...)
# Adds the ISA's files, with its flags, when building for that processor.
function(samebits_kernel_isa isa)
  cmake_parse_arguments(arg "" "PROCESSOR" "FLAGS;SOURCES" ${ARGN})
  if(NOT samebits_is_${arg_PROCESSOR})
    return()
  endif()
  if(arg_FLAGS)
    set_source_files_properties(${arg_SOURCES} PROPERTIES COMPILE_OPTIONS "${arg_FLAGS}")
  endif()
  set(listed "${samebits_isa_sources_list}")
  foreach(source IN LISTS arg_SOURCES)
    string(JOIN " " flags ${arg_FLAGS})
    string(APPEND listed "${source}\t${flags}\n")
  endforeach()
  set(samebits_isa_sources_list "${listed}" PARENT_SCOPE)
  set(kernels_sources ${kernels_sources} ${arg_SOURCES} PARENT_SCOPE)
endfunction()

samebits_kernel_isa(avx2 PROCESSOR x86
  FLAGS -mavx2 -mfma -mf16c
  SOURCES kernels/exp_avx2.cc kernels/int8_avx2.cc kernels/int8_avx2_repacked.cc
          kernels/matmul_avx2.cc)
samebits_kernel_isa(avx512 PROCESSOR x86
  FLAGS -mavx512f -mavx512bw -mavx512vl -mavx2 -mfma -mf16c
  SOURCES kernels/attention_avx512.cc kernels/exp_avx512.cc kernels/int8_avx512.cc
          kernels/matmul_avx512.cc)
samebits_kernel_isa(avx512vnni PROCESSOR x86
  FLAGS -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mavx2 -mfma -mf16c
  SOURCES kernels/int8_avx512_vnni.cc)
# NEON is the aarch64 baseline: no extra flags.
samebits_kernel_isa(neon PROCESSOR arm64
  SOURCES kernels/int8_neon.cc kernels/matmul_neon.cc)

# The ISA files and their flags, one "path<TAB>flags" line each (paths
# relative to engine/), for the weak-symbol test.
file(WRITE ${CMAKE_BINARY_DIR}/generated/isa_sources.txt "${samebits_isa_sources_list}")
