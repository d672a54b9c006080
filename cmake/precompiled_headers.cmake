# Precompiled headers: the third-party headers that most files of a target
# include, parsed once per target instead of once per file.
#
# Why: CI compiles the tree cold four times (Release, the sanitizers, the
# aarch64 engine), and parsing the same headers was a large part of it:
# CLI/CLI.hpp alone takes 3.5 CPU-s to parse in each of the 44 files of the
# two programs' commands, nlohmann/json.hpp about 2 s, gtest/gtest.h about
# 1.5 s in each of 150 test files (g++ 12, 2026-12-05; docs/building.md,
# "What CI runs", has the measured saving).
#
# Only headers from outside the tree go here, so a change to our own headers
# never rebuilds a precompiled one, and the include-layer rule
# (tests/harness/include_layers_test.cc) reads the sources as they are.
# The kernels' libraries are left alone: their files are compiled with ISA
# flags of their own.
#
# -DSAMEBITS_PCH=OFF compiles every file on its own (to check that each
# includes what it uses: a precompiled header hides a missing #include).
option(SAMEBITS_PCH "Precompile the third-party headers of the commands and the tests" ON)

set(SAMEBITS_PCH_STANDARD_HEADERS
  <algorithm> <cstdint> <filesystem> <functional> <map> <memory> <optional>
  <sstream> <string> <string_view> <vector>)

# samebits_precompile_headers(TARGET HEADER...): TARGET's files are compiled
# with the standard headers above and HEADER... precompiled.
function(samebits_precompile_headers target)
  if(SAMEBITS_PCH)
    target_precompile_headers(${target} PRIVATE ${SAMEBITS_PCH_STANDARD_HEADERS} ${ARGN})
  endif()
endfunction()
