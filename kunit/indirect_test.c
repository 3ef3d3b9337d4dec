// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: indirect_test (being written).
 */
#include <kunit/test.h>
