#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# librdmacm's endpoint calls: ./user_cm (user_cm.c, kselftest harness,
# TAP; Debian's librdmacm and librxe) runs in the host root's chroot
# (user_lib.sh), over vhca0 and then over rxe0, each on a dummy netdev
# with its own IPv4 address (MRC_UADDR) and RDMA CM port (MRC_UPORT).
# Every case must pass on both. Its lines, as user_mrlib.sh's:
#
#   ok N create_ep        ->  ok - user-cm DEV: create_ep
#
# The "observed: NAME=VALUE" lines of each run (facts either device may
# have, such as the rkey of a local-only MR) are compared after both:
# a difference is printed as a TAP comment, a finding, not a failure.
#
# After each device: ib_core's counts of it ("rdma res show") back to what
# they were before the program (on vhca0 mrcore's accounting and vhca's
# live device keys too: user_lib.sh's mrc_dev_counts), and the kernel log
# since it began has no leak, warning or hung task.
. ./lib.sh
. ./chardev_lib.sh
. ./nvmeof.sh
. ./user_lib.sh

UPROG=user_cm
UNAME=user-cm
UPORT=20886
. ./user_rig.sh

urig_main vhca vhca0 ucmv0 10.96.0.1 rxe rxe0 ucmr0 10.96.1.1
