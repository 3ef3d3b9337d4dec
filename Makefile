# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree wrapper. "make" builds mrcore.ko and vhca.ko against KDIR,
# by default Debian's headers for the current 6.1 ABI (installed on
# demand). The test and demo targets call scripts/ and install what they
# need themselves.

SHELL := /bin/bash
ABI := $(shell bash $(CURDIR)/scripts/abi.sh)
KDIR ?= /usr/src/linux-headers-$(ABI)-amd64
KBUILD_FLAGS := W=1

# Our sources, for sparse/checkpatch.
SRCS := $(shell find drivers include kunit tools -name '*.[ch]' ! -name '*.mod.c' 2>/dev/null | sort)

.PHONY: all modules deps clean install sparse checkpatch kunit vmtest \
	bench demo check help

all: modules

deps:
	@bash scripts/deps.sh build

modules: deps
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KBUILD_FLAGS) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	depmod -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(ABI)-amd64

sparse: deps
	@bash scripts/deps.sh all
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KBUILD_FLAGS) C=2 CHECK="sparse -Wno-unknown-attribute" modules

checkpatch:
	@bash scripts/checkpatch.sh $(SRCS)

kunit:
	@bash scripts/kunit.sh

vmtest:
	@bash scripts/vmtest.sh $(if $(KERNEL),--kernel=$(KERNEL))

bench:
	@bash scripts/vmtest.sh --bench

demo:
	@bash scripts/vmtest.sh --demo

check:
	@bash scripts/check.sh

help:
	@echo "make [modules]   build mrcore.ko and vhca.ko (W=1) against KDIR=$(KDIR)"
	@echo "make install     modules_install into extra/ and depmod"
	@echo "make sparse      sparse (C=2)"
	@echo "make checkpatch  checkpatch --strict on our files"
	@echo "make kunit       KUnit in QEMU on the debug kernel"
	@echo "make vmtest      VM tests on the stock kernel (KERNEL=debug for the debug kernel)"
	@echo "make bench       benchmarks, vhca beside rxe, in one VM boot"
	@echo "make demo        boot a VM, create vhca0, run NVMe-oF, say what happened"
	@echo "make check       all of the above but bench/demo; ends with 'N passed, N failed'"
