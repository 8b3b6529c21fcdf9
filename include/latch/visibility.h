/* SPDX-License-Identifier: MIT */
/*
 * latch/visibility.h - marks the functions liblatch exports.
 *
 * The library is built with hidden visibility and a version script, so
 * only functions declared with LATCH_API are part of its ABI.
 */
#ifndef LATCH_VISIBILITY_H
#define LATCH_VISIBILITY_H

/** Declares a function exported by liblatch. */
#define LATCH_API __attribute__((visibility("default")))

#endif /* LATCH_VISIBILITY_H */
