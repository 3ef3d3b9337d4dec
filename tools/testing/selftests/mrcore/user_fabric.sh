#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# libfabric's verbs provider and libvhca's answers to its refusals:
# ./user_fabric (user_fabric.c, kselftest harness, TAP; Debian's libfabric
# 1.17, libibverbs and librxe, libvhca built in) runs in the host root's chroot
# (user_lib.sh), over vhca0 and then over rxe0, each on a dummy netdev
# with its own IPv4 address (MRC_UADDR) and RDMA CM port (MRC_UPORT).
# Every case must pass on both: on rxe0 libvhca's calls must fail with
# EOPNOTSUPP (MRC_UDEV_TYPE=rxe). Its lines, as user_mrlib.sh's:
#
#   ok N mr_reg        ->  ok - user-fabric DEV: mr_reg
#
# The "observed: NAME=VALUE" lines of each run (facts either device may
# have, such as the error of an RMA through a closed MR's key) are compared after both:
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

UPROG=user_fabric
UNAME=user-fabric
UPORT=20887
. ./user_rig.sh

urig_main vhca vhca0 ufbv0 10.97.0.1 rxe rxe0 ufbr0 10.97.1.1
