#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the ABI (e.g. 6.1.0-56) of Debian's current 6.1 kernel.
. "$(dirname "$0")/lib.sh"
mrc_abi
