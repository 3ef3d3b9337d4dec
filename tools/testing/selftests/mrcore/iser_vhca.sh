#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# iSER over vhca: the LIO target (isert) and the open-iscsi initiator
# (ib_iser) in this VM over one vhca device on a dummy netdev, the
# connection looping back through the vhca fabric; the same checks as
# iser_rxe.sh, then the unload: vhca idle, rdma link del, rmmod vhca
# mrcore, no leak in the kernel log. See iser_suite in iser.sh.
. ./lib.sh
. ./nvmeof.sh
. ./iser.sh

iser_suite vhca vhca0 ivd0 10.80.0.1
