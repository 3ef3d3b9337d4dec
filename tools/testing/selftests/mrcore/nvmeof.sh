# SPDX-License-Identifier: GPL-2.0
# NVMe-oF over RDMA helpers: an nvmet-rdma target backed by a RAM disk
# (so data can be verified) and an nvme-rdma host, both in this VM.

NQN=nqn.2026-11.org.mrcore:ram0
CFS=/sys/kernel/config/nvmet

nvmeof_modules() {
	modprobe crc32_generic 2>/dev/null
	modprobe crc32c_generic 2>/dev/null
	modprobe crct10dif_generic 2>/dev/null
	modprobe brd rd_nr=1 rd_size=131072 &&
	modprobe nvmet && modprobe nvmet-rdma && modprobe nvme-rdma
}

# nvmet_up ADDR: export /dev/ram0 on ADDR:4420.
nvmet_up() {
	mkdir $CFS/subsystems/$NQN &&
	echo 1 > $CFS/subsystems/$NQN/attr_allow_any_host &&
	mkdir $CFS/subsystems/$NQN/namespaces/1 &&
	echo /dev/ram0 > $CFS/subsystems/$NQN/namespaces/1/device_path &&
	echo 1 > $CFS/subsystems/$NQN/namespaces/1/enable &&
	mkdir $CFS/ports/1 &&
	echo rdma > $CFS/ports/1/addr_trtype &&
	echo ipv4 > $CFS/ports/1/addr_adrfam &&
	echo "$1" > $CFS/ports/1/addr_traddr &&
	echo 4420 > $CFS/ports/1/addr_trsvcid &&
	ln -s $CFS/subsystems/$NQN $CFS/ports/1/subsystems/$NQN
}

# On a lockdep kernel the port is left configured: 6.1's nvmet takes
# nvmet_config_sem then a cm_id's handler_mutex when a port goes away,
# while an I/O-queue connect nests them the other way, and lockdep reports
# that once and then switches itself off for the rest of the boot. The VM
# is discarded after the run, so nothing is lost by not removing the port.
nvmet_down() {
	if [ -e /proc/lockdep ]; then
		echo "# nvmet port left configured (6.1 nvmet lockdep report on port removal)"
		return 0
	fi
	rm -f $CFS/ports/1/subsystems/$NQN
	rmdir $CFS/ports/1 2>/dev/null
	echo 0 > $CFS/subsystems/$NQN/namespaces/1/enable 2>/dev/null
	rmdir $CFS/subsystems/$NQN/namespaces/1 2>/dev/null
	rmdir $CFS/subsystems/$NQN 2>/dev/null
}

# nvme_host_up ADDR [QUEUES]: connect and print the namespace's block device.
nvme_host_up() {
	local q=${2:-1} dev
	echo "transport=rdma,traddr=$1,trsvcid=4420,nqn=$NQN,nr_io_queues=$q" \
		> /dev/nvme-fabrics || return 1
	wait_for 20 sh -c 'ls /sys/block | grep -q "^nvme[0-9]*n1$"' || return 1
	dev=$(ls /sys/block | grep '^nvme[0-9]*n1$' | head -1)
	echo "/dev/$dev"
}

nvme_host_down() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/delete_controller" ] && echo 1 > "$c/delete_controller"
	done
	wait_for 20 sh -c '! ls /sys/block | grep -q "^nvme"'
}

# pattern_rw DEV MB: write MB of random data with O_DIRECT, read it back,
# compare byte for byte.
pattern_rw() {
	dd if=/dev/urandom of=/tmp/pat bs=1M count="$2" 2>/dev/null &&
	dd if=/tmp/pat of="$1" bs=1M oflag=direct 2>/dev/null &&
	dd if="$1" of=/tmp/back bs=1M count="$2" iflag=direct 2>/dev/null &&
	cmp /tmp/pat /tmp/back
}
