// SPDX-License-Identifier: MIT
// The consumer, compiled as C++17: the public headers and their inline
// code must work for C++ programs too.
#include "consumer.c"
