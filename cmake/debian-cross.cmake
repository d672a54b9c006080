# Shared body of the Debian cross toolchain files (toolchain-*.cmake), which
# set SAMEBITS_CROSS_TRIPLET and CMAKE_SYSTEM_PROCESSOR before including it.
# It builds with Debian's cross compiler (g++-TRIPLET) against the target's
# libraries under /usr/TRIPLET, runs target programs through qemu-user, and
# builds only the engine (ci/cross.sh drives it from the host's harness).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_CXX_COMPILER ${SAMEBITS_CROSS_TRIPLET}-g++)
# The cross toolchain's own libraries live under /usr/TRIPLET. The target's
# other libraries (PCRE2) come from the folder SAMEBITS_CROSS_LIBS names in
# the environment when set (ci/cross.sh unpacks the target's Debian packages
# there, since installing them as multiarch packages ties them to the host's
# versions), else from Debian multiarch packages under /usr/lib/TRIPLET.
if(NOT "$ENV{SAMEBITS_CROSS_LIBS}" STREQUAL "")
  set(_samebits_target_root $ENV{SAMEBITS_CROSS_LIBS})
  # Their .pc files say prefix=/usr: pkg-config puts the folder in front.
  set(ENV{PKG_CONFIG_SYSROOT_DIR} ${_samebits_target_root})
else()
  set(_samebits_target_root /)
endif()
set(CMAKE_FIND_ROOT_PATH /usr/${SAMEBITS_CROSS_TRIPLET} ${_samebits_target_root} /)
# pkg-config reads the target's .pc files only.
set(ENV{PKG_CONFIG_LIBDIR}
    ${_samebits_target_root}/usr/lib/${SAMEBITS_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Target libraries only; headers and CMake package files may come from the
# host, because the engine's other dependencies (nlohmann-json, CLI11, the
# xxHash header) are header-only and the same on every architecture.
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The target's dynamic loader comes from /usr/TRIPLET (-L), so its C library
# must too: the search path puts that folder first, ahead of any multiarch
# libc of another version, which the loader cannot work with.
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-${CMAKE_SYSTEM_PROCESSOR} -L /usr/${SAMEBITS_CROSS_TRIPLET} -E
    LD_LIBRARY_PATH=/usr/${SAMEBITS_CROSS_TRIPLET}/lib:${_samebits_target_root}/usr/lib/${SAMEBITS_CROSS_TRIPLET})
# No target build of libxxhash is needed: xxHash is compiled from its header.
set(SAMEBITS_ENGINE_ONLY ON CACHE BOOL "Build only samebits-engine")
set(SAMEBITS_XXHASH_INLINE ON CACHE BOOL "Compile xxHash from xxhash.h")
