# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree kbuild wrapper. "make" builds mrcore.ko, vhca.ko and
# mrcore_test.ko for the running kernel (any 6.1 build whose headers are
# installed), "make install" installs them into its extra/ and runs
# depmod for that kernel, then installs libvhca ("make install-lib":
# the library, its header, pkg-config file and man pages under PREFIX,
# /usr/local by default, and DESTDIR; no kernel headers needed). KDIR
# names another kernel's build tree.
#
# Nothing here installs anything or asks apt: the test, sparse, bench and
# demo targets call scripts/, which install what they need (scripts/deps.sh)
# and build against the headers of the Debian 6.1 kernel the VM tier boots,
# passing KDIR themselves.

SHELL := /bin/bash
KDIR ?= /lib/modules/$(shell uname -r)/build
KBUILD_FLAGS := W=1

# The release of the kernel KDIR builds for, as modules_install names its
# directory (for depmod); evaluated only by the recipe that uses it.
# UTS_RELEASE, not include/config/kernel.release: Debian's headers hold
# the upstream version there (6.1.192) and set the release (6.1.0-56-amd64)
# in .kernelvariables.
KRELEASE = $(shell awk '/define UTS_RELEASE/ {gsub(/"/, "", $$3); print $$3}' $(KDIR)/include/generated/utsrelease.h)

# Our sources, for checkpatch; evaluated only by its recipe.
SRCS = $(shell find drivers include kunit tools -name '*.[ch]' ! -name '*.mod.c' 2>/dev/null | sort)

.PHONY: all modules kdir clean install lib install-lib sparse checkpatch \
	kunit vmtest bench demo fuzz check help

all: modules

# A clear message, before kbuild's, when KDIR is not a kernel build tree.
kdir:
	@if [ ! -f "$(KDIR)/Makefile" ]; then \
		echo "make: no kernel build tree in KDIR=$(KDIR)." >&2; \
		echo "  Install the headers of the kernel to build for; on Debian," >&2; \
		echo "  for the running kernel: apt install linux-headers-$$(uname -r)" >&2; \
		echo "  Or name a build tree: make KDIR=/path/to/linux-build" >&2; \
		exit 1; \
	fi

modules: kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KBUILD_FLAGS) modules

clean: kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C libvhca clean

install: modules install-lib
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	depmod -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KRELEASE)

# libvhca, the user-space library (needs libibverbs-dev).
lib:
	$(MAKE) -C libvhca

install-lib:
	$(MAKE) -C libvhca install

# sparse against the Debian 6.1 headers (installed on demand), or against
# KDIR when it is given on the command line or in the environment.
sparse:
	@bash scripts/sparse.sh $(if $(filter-out file,$(origin KDIR)),$(KDIR))

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

fuzz:
	@bash scripts/fuzz.sh

check:
	@bash scripts/check.sh

help:
	@echo "make [modules]   build mrcore.ko, vhca.ko, mrcore_test.ko (W=1) against"
	@echo "                 KDIR=$(KDIR)"
	@echo "make install     modules_install into extra/ and depmod for KDIR's kernel,"
	@echo "                 then make install-lib"
	@echo "make lib         build libvhca (libvhca/build/)"
	@echo "make install-lib install libvhca, its header, pkg-config file and man pages"
	@echo "                 (PREFIX=/usr/local, DESTDIR)"
	@echo "make clean       remove what the build left"
	@echo "The targets below install their packages and use Debian's 6.1 kernel:"
	@echo "make sparse      sparse (C=2) against its headers (or against KDIR=...)"
	@echo "make checkpatch  checkpatch --strict on our files"
	@echo "make kunit       every KUnit suite, mrcore's and vhca's, in QEMU on the debug kernel"
	@echo "make vmtest      VM tests on the stock kernel (KERNEL=debug for the debug kernel)"
	@echo "make bench       benchmarks, vhca beside rxe, in one VM boot"
	@echo "make fuzz        the fuzzer on the debug kernel, then kmemleak and the coverage"
	@echo "                 it reached (FUZZ_SECONDS=600, FUZZ_EXECS, FUZZ_SEED, FUZZ_THREADS,"
	@echo "                 FUZZ_FAMILIES)"
	@echo "make demo        boot a VM, create vhca0, run NVMe-oF, say what happened"
	@echo "make check       all of the above but bench/demo; ends with 'N passed, N failed'"
