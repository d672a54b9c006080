# Cross-builds the engine for IBM Z (big-endian; scalar kernels) with
# Debian's g++-s390x-linux-gnu. Used by ci/cross.sh.
set(SAMEBITS_CROSS_TRIPLET s390x-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR s390x)
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake)
