# SPDX-License-Identifier: MIT
# Cross-build for 64-bit Arm Linux with Debian's cross toolchain
# (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu, libc6-dev-arm64-cross);
# CTest runs the programs under qemu-user (Debian's qemu-user).
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#   (or: make check-arm64)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(LATCH_CROSS_TRIPLE aarch64-linux-gnu)
set(LATCH_CROSS_SYSROOT /usr/${LATCH_CROSS_TRIPLE})
set(CMAKE_C_COMPILER ${LATCH_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${LATCH_CROSS_TRIPLE}-g++)

# Libraries, headers and packages come from the target's tree only;
# programs run at build time (none today) from the host.
set(CMAKE_FIND_ROOT_PATH ${LATCH_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# add_test() commands run through the emulator, with the target's dynamic
# loader and libc taken from the cross sysroot.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${LATCH_CROSS_SYSROOT})

# Optional dependencies found through pkg-config must be arm64 ones.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${LATCH_CROSS_TRIPLE}/pkgconfig)
