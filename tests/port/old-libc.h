/* SPDX-License-Identifier: MIT */
/*
 * Force-included (-include) into every C file of a build that plays a C
 * library without _dl_find_object() (glibc < 2.35, musl) and mallinfo2()
 * (glibc < 2.33): the names are declared under names no library defines,
 * so a call compiles but does not link, as on such a system.  latchbench
 * must detect both missing, leave out what needs them, and still pass
 * its self-check (the old-libc stage of .ci/matrix).
 */
#define _dl_find_object latch_old_libc_has_no_dl_find_object
#define mallinfo2       latch_old_libc_has_no_mallinfo2
