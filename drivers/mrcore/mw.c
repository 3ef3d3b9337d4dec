// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: mw (being written).
 */
#include "mrcore_loc.h"
