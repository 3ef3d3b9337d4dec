// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: indirect (being written).
 */
#include "mrcore_loc.h"
