// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: fmr_test (being written).
 */
#include <kunit/test.h>
