#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Reference baseline: iSER over rxe on a dummy netdev, LIO target (isert)
# and open-iscsi initiator (ib_iser) in this VM; see iser_suite in iser.sh.
. ./lib.sh
. ./nvmeof.sh
. ./iser.sh

iser_suite rxe rxe1 ird0 10.79.0.1
