# Cross-builds the engine for 64-bit ARM (little-endian; NEON kernels) with
# Debian's g++-aarch64-linux-gnu. Used by ci/cross.sh.
set(SAMEBITS_CROSS_TRIPLET aarch64-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake)
