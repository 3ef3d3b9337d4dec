// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: fmr (being written).
 */
#include "mrcore_loc.h"
