// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: mw_test (being written).
 */
#include <kunit/test.h>
