# SPDX-License-Identifier: MIT
# 32-bit x86 build on an x86-64 Linux host with the host's gcc or clang
# and -m32 (Debian: gcc-12-multilib, g++-12-multilib).  The programs run
# natively on a 64-bit kernel that runs 32-bit programs; on one built
# without that (no IA32 emulation: "Exec format error"), CTest runs them
# under qemu-user's qemu-i386 (Debian's qemu-user).
#
#   cmake -S . -B build-m32 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-m32.cmake
#   (or: make check-m32; CC=clang works too)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)

# Debian's gcc-multilib package only adds the symlink /usr/include/asm ->
# x86_64-linux-gnu/asm (the kernel headers there serve both widths), and it
# conflicts with the cross compilers the arm64 build needs.  Searching that
# folder last gives -m32 builds the same headers without the symlink.
set(LATCH_M32_FLAGS "-m32 -idirafter /usr/include/x86_64-linux-gnu")
set(CMAKE_C_FLAGS_INIT "${LATCH_M32_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${LATCH_M32_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT -m32)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -m32)
set(CMAKE_MODULE_LINKER_FLAGS_INIT -m32)
set(CMAKE_LIBRARY_ARCHITECTURE i386-linux-gnu)

# Optional dependencies found through pkg-config must be 32-bit ones.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/i386-linux-gnu/pkgconfig)

# Can this kernel run a 32-bit x86 program?  The 32-bit dynamic loader
# (from the multilib packages) is one: run it for its version.
execute_process(COMMAND /lib/ld-linux.so.2 --version RESULT_VARIABLE LATCH_M32_NATIVE
                OUTPUT_QUIET ERROR_QUIET)
if(NOT LATCH_M32_NATIVE STREQUAL "0")
  find_program(LATCH_QEMU_I386 qemu-i386)
  if(NOT LATCH_QEMU_I386)
    message(FATAL_ERROR "this kernel cannot run 32-bit x86 programs (${LATCH_M32_NATIVE}), "
                        "and qemu-i386 is not installed (Debian: qemu-user)")
  endif()
  # add_test() commands run through the emulator; the 32-bit loader and
  # libraries are the host's own multilib ones.
  set(CMAKE_CROSSCOMPILING_EMULATOR ${LATCH_QEMU_I386})
endif()
