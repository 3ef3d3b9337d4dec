#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""User-space memory registration, windows, atomics, SRQ and UD through
Debian's python3-pyverbs (rdma-core 44.0) on one RDMA device (issue 18).

	user_pyverbs.py DEV

Two QPs of DEV talk to each other (loopback on one device): each case
builds its own PD, CQs and QP pair, runs traffic and checks the bytes, or
the error status the verbs man pages and the IBA give. One line per case,
the VM tier's format (lib.sh):

	ok - pyverbs: DEV: NAME
	ok - pyverbs: DEV: NAME # SKIP WHY       (decided from the device's
	                                          attributes, before running)
	not ok - pyverbs: DEV: NAME # WHY

Where a device is known to answer otherwise than the text the case follows
(RXE61 below: rxe of Linux 6.1), the case asserts what that device does
and prints "#   pyverbs: DEV differs: ..." under its line, so the
difference stays visible and a change in it fails. Exit status 1 when a
case failed.
"""

import ctypes
import errno
import json
import mmap
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

# Bounds a failure only: every wait ends as soon as what it waits for is
# there (lib.sh's PROGRESS_TMO).
PROGRESS_TMO = 60
PAGE = mmap.PAGESIZE
LEN = 2 * PAGE
PORT = 1
QKEY = 0x11111111
GRH_LEN = 40
# The huge page size user_pyverbs.sh reserves pages of (x86-64's default).
HPAGE = 2 << 20
# <asm-generic/mman-common.h>; Python's mmap module does not name it.
MAP_HUGETLB = 0x40000

LW = e.IBV_ACCESS_LOCAL_WRITE
RW = e.IBV_ACCESS_REMOTE_WRITE
RR = e.IBV_ACCESS_REMOTE_READ
RA = e.IBV_ACCESS_REMOTE_ATOMIC
MWB = e.IBV_ACCESS_MW_BIND
ZB = e.IBV_ACCESS_ZERO_BASED
ODP = e.IBV_ACCESS_ON_DEMAND
RO = e.IBV_ACCESS_RELAXED_ORDERING
HUGE = e.IBV_ACCESS_HUGETLB
ALL_REMOTE = LW | RW | RR | RA

ACCESS_NAMES = [(LW, 'LOCAL_WRITE'), (RW, 'REMOTE_WRITE'),
		(RR, 'REMOTE_READ'), (RA, 'REMOTE_ATOMIC'), (MWB, 'MW_BIND'),
		(ZB, 'ZERO_BASED'), (ODP, 'ON_DEMAND'), (RO, 'RELAXED_ORDERING'),
		(HUGE, 'HUGETLB')]

STATUS_NAMES = {getattr(e, n): n[len('IBV_WC_'):] for n in dir(e)
		if n.startswith('IBV_WC_') and n.endswith('_ERR')}
STATUS_NAMES[e.IBV_WC_SUCCESS] = 'SUCCESS'

# rxe of Linux 6.1 (with librxe 44) where it answers otherwise than the
# text a case follows: case key -> (rxe's answer, why). The case then
# asserts rxe's answer on rxe devices and says so under its line.
RXE61 = {}
# Where librxe itself, the provider of rxe0 and of vhca0, makes the
# answer differ from the text, whatever the device: key -> (the answer,
# why).
LIBRXE = {}


class Fail(Exception):
	pass


def access_str(acc):
	names = [n for bit, n in ACCESS_NAMES if acc & bit]
	return '|'.join(names) if names else '0'


def status_str(st):
	return STATUS_NAMES.get(st, str(st))


def pattern(seed, n):
	return bytes((seed * 131 + i * 7 + (i >> 8)) & 0xff for i in range(n))


class Dev:
	"""DEV opened once; its attributes decide the skips."""

	def __init__(self, name):
		self.name = name
		self.kind = re.sub(r'\d+$', '', name)
		fds = set(os.listdir('/proc/self/fd'))
		self.ctx = Context(name=name)
		# The async event fd is not exposed by pyverbs 44: it is the
		# context's one new "[infinibandevent]" file.
		ev = [int(f) for f in set(os.listdir('/proc/self/fd')) - fds
		      if 'infinibandevent' in self._link(f)]
		self.async_fd = ev[0] if len(ev) == 1 else None
		self.attr = self.ctx.query_device()
		self.attr_ex = self.ctx.query_device_ex()
		self.odp = self.attr_ex.odp_caps
		self.gid_index, self.gid = self._pick_gid()

	@staticmethod
	def _link(f):
		try:
			return os.readlink('/proc/self/fd/' + f)
		except OSError:
			return ''

	def _pick_gid(self):
		"""The first RoCE v2 GID, IPv4-mapped preferred, else index 0."""
		tbl = self.ctx.query_port(PORT).gid_tbl_len
		best = None
		for i in range(tbl):
			try:
				g = self.ctx.query_gid(PORT, i)
				t = self.ctx.query_gid_type(PORT, i)
			except PyverbsRDMAError:
				continue
			raw = gid_bytes(g)
			if not any(raw):
				continue
			v2 = t == e.IBV_GID_TYPE_SYSFS_ROCE_V2
			v4 = raw[:12] == b'\0' * 10 + b'\xff\xff'
			score = v2 * 2 + v4
			if best is None or score > best[0]:
				best = (score, i, g)
		if best is None:
			return 0, self.ctx.query_gid(PORT, 0)
		return best[1], best[2]

	def differs(self, key):
		"""(the answer, why) when librxe, or rxe for DEV rxe, differs."""
		if key in LIBRXE:
			return LIBRXE[key]
		if self.kind == 'rxe' and key in RXE61:
			return RXE61[key]
		return None


def gid_bytes(g):
	return bytes.fromhex(str(g).replace(':', ''))


class Case:
	"""The objects of one case, closed when it ends (PD last: pyverbs
	closes the QPs, windows and MRs made in it first)."""

	def __init__(self, d):
		self.d = d
		self.pd = PD(d.ctx)
		self.cqs = []
		self.notes = []
		self.maps = []

	def close(self):
		self.pd.close()
		for cq in self.cqs:
			cq.close()
		for m in self.maps:
			m.close()

	def cq(self, cqe=64):
		cq = CQ(self.d.ctx, cqe)
		self.cqs.append(cq)
		return cq

	def mr(self, access, length=LEN, **kw):
		return MR(self.pd, length, access, **kw)

	def anon(self, length=LEN, flags=0):
		"""An anonymous private mapping (mmap flags @flags besides) and
		its address."""
		m = mmap.mmap(-1, length,
			      flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | flags)
		self.maps.append(m)
		return m, ctypes.addressof(ctypes.c_char.from_buffer(m))

	def rc_pair(self, srq=None, ex_ops=0):
		return Pair(self, e.IBV_QPT_RC, srq, ex_ops)

	def ud_pair(self):
		return Pair(self, e.IBV_QPT_UD)

	def note(self, s):
		self.notes.append(s)

	def expect(self, key, got, want, what):
		"""got must be want, or rxe's known answer (noted) on rxe."""
		diff = self.d.differs(key)
		if diff is not None:
			rxe_says, why = diff
			self.note(f'{self.d.name} differs: {what}: {rxe_says} where the '
				  f'text gives {want}: {why}')
			want = rxe_says
		if got != want:
			raise Fail(f'{what}: {got}, wanted {want}')


class Pair:
	"""QP a sends to QP b; each has its own CQ for send and receive.
	With ex_ops, a is an extended QP posting those IBV_QP_EX_WITH_*
	operations (ibv_wr_*)."""

	def __init__(self, c, qpt, srq=None, ex_ops=0, cq_a=None):
		self.c = c
		d = c.d
		self.cq_a, self.cq_b = cq_a or c.cq(), c.cq()
		cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
			    max_recv_sge=1)
		if ex_ops:
			mask = (e.IBV_QP_INIT_ATTR_PD |
				e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
			self.a = QPEx(d.ctx, QPInitAttrEx(
				qp_type=qpt, scq=self.cq_a, rcq=self.cq_a,
				cap=cap, sq_sig_all=1, pd=c.pd, comp_mask=mask,
				send_ops_flags=ex_ops))
		else:
			self.a = QP(c.pd, QPInitAttr(qp_type=qpt, scq=self.cq_a,
						     rcq=self.cq_a, cap=cap,
						     sq_sig_all=1))
		if srq:
			cap = QPCap(max_send_wr=16, max_recv_wr=0, max_send_sge=1,
				    max_recv_sge=1)
		self.b = QP(c.pd, QPInitAttr(qp_type=qpt, scq=self.cq_b,
					     rcq=self.cq_b, srq=srq, cap=cap,
					     sq_sig_all=1))
		if qpt == e.IBV_QPT_UD:
			for qp in (self.a, self.b):
				attr = QPAttr(port_num=PORT)
				attr.qkey = QKEY
				attr.pkey_index = 0
				attr.sq_psn = 0
				qp.to_rts(attr)
			return
		for qp, peer in ((self.a, self.b), (self.b, self.a)):
			attr = QPAttr(port_num=PORT, path_mtu=e.IBV_MTU_1024)
			attr.qp_access_flags = ALL_REMOTE
			attr.pkey_index = 0
			attr.dest_qp_num = peer.qp_num
			attr.rq_psn = 0
			attr.sq_psn = 0
			attr.max_dest_rd_atomic = 1
			attr.max_rd_atomic = 1
			attr.min_rnr_timer = 12
			attr.timeout = 14
			attr.retry_cnt = 7
			attr.rnr_retry = 7
			attr.ah_attr = AHAttr(port_num=PORT, is_global=1,
					      gr=GlobalRoute(dgid=d.gid,
							     sgid_index=d.gid_index,
							     hop_limit=1))
			qp.to_rts(attr)

	# Work requests; each returns the requester's completion.

	def recv(self, qp, addr, length, lkey, wr_id=1):
		qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
				    sg=[SGE(addr, length, lkey)]))

	def send(self, addr, length, lkey, inv_rkey=None):
		op = e.IBV_WR_SEND if inv_rkey is None else e.IBV_WR_SEND_WITH_INV
		wr = SendWR(wr_id=2, opcode=op, num_sge=1,
			    sg=[SGE(addr, length, lkey)])
		if inv_rkey is not None:
			# invalidate_rkey shares imm_data's union in ibv_send_wr
			wr.imm_data = inv_rkey
		self.a.post_send(wr)
		return wait_wc(self.cq_a)[0]

	def write(self, addr, length, lkey, raddr, rkey):
		wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
			    sg=[SGE(addr, length, lkey)])
		wr.set_wr_rdma(rkey, raddr)
		self.a.post_send(wr)
		return wait_wc(self.cq_a)[0]

	def read(self, addr, length, lkey, raddr, rkey):
		wr = SendWR(wr_id=4, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
			    sg=[SGE(addr, length, lkey)])
		wr.set_wr_rdma(rkey, raddr)
		self.a.post_send(wr)
		return wait_wc(self.cq_a)[0]

	def atomic(self, op, addr, lkey, raddr, rkey, compare_add, swap=0):
		wr = SendWR(wr_id=5, opcode=op, num_sge=1,
			    sg=[SGE(addr, 8, lkey)])
		wr.set_wr_atomic(rkey, raddr, compare_add, swap)
		self.a.post_send(wr)
		return wait_wc(self.cq_a)[0]

	def local_inv(self, qp, cq, rkey):
		qp.post_send(SendWR(wr_id=6, opcode=e.IBV_WR_LOCAL_INV,
				    imm_data=rkey))
		return wait_wc(cq)[0]

	def bind2(self, mw, mr, addr, length, access):
		"""Bind type-2 window mw on b (the QP it is then reached
		through) with IBV_WR_BIND_MW; returns (completion, new rkey)."""
		wr = SendWR(wr_id=7, opcode=e.IBV_WR_BIND_MW)
		wr.set_bind_wr(mw, MWBindInfo(mr, addr, length, access))
		self.b.post_send(wr)
		wc = wait_wc(self.cq_b)[0]
		if wc.status == e.IBV_WC_SUCCESS:
			# ibv_post_send(3) leaves mw->rkey to the caller; the
			# next bind names the window by it.
			set_mw_rkey(mw, wr.rkey)
		return wc, wr.rkey

	def bind1(self, mw, mr, addr, length, access):
		"""Bind type-1 window mw with ibv_bind_mw on b."""
		self.b.bind_mw(mw, MWBind(MWBindInfo(mr, addr, length, access),
					  e.IBV_SEND_SIGNALED))
		return wait_wc(self.cq_b)[0]


def wait_wc(cq, n=1):
	deadline = time.monotonic() + PROGRESS_TMO
	wcs = []
	while len(wcs) < n:
		_, got = cq.poll(n - len(wcs))
		wcs += got
		if got:
			continue
		if time.monotonic() > deadline:
			raise Fail(f'{len(wcs)} of {n} completions after {PROGRESS_TMO} s')
		time.sleep(0.0002)
	return wcs


def ok_wc(wc, what):
	if wc.status != e.IBV_WC_SUCCESS:
		raise Fail(f'{what}: completion {status_str(wc.status)}')


def err_wc(wc, want, what):
	if wc.status != want:
		raise Fail(f'{what}: completion {status_str(wc.status)}, '
			   f'wanted {status_str(want)}')


def same(got, want, what):
	if got != want:
		i = next(i for i in range(min(len(got), len(want)))
			 if got[i] != want[i]) if len(got) == len(want) else -1
		raise Fail(f'{what}: bytes differ (first at {i})')


def refused(fn, want, what):
	"""fn() fails with errno @want, or one of the tuple @want."""
	wants = want if isinstance(want, tuple) else (want,)
	names = '/'.join(errno.errorcode[w] for w in wants)
	try:
		fn()
	except PyverbsRDMAError as ex:
		if ex.error_code not in wants:
			raise Fail(f'{what}: errno {ex.error_code}, wanted '
				   f'{names}') from None
		return
	raise Fail(f'{what}: succeeded, wanted {names}')


# -- the cases ---------------------------------------------------------------

CASES = []


def case(name, needs=None):
	def reg(fn):
		CASES.append((name, needs, fn))
		return fn
	return reg


def exercise(c, mr, access, tag):
	"""The traffic access allows on mr (remote write, read, atomic,
	receive, local read as a send source), bytes checked each time."""
	p = c.rc_pair()
	peer = c.mr(LW)
	data = pattern(len(tag), 256)
	# Local read is always allowed: mr as a send's source.
	mr.write(data, len(data), 64)
	p.recv(p.b, peer.buf, 256, peer.lkey)
	ok_wc(p.send(mr.buf + 64, 256, mr.lkey), f'{tag}: send from it')
	ok_wc(wait_wc(p.cq_b)[0], f'{tag}: receive')
	same(peer.read(256, 0), data, f'{tag}: sent bytes')
	if access & LW:
		data = pattern(3, 128)
		peer.write(data, 128, 512)
		p.recv(p.b, mr.buf + 1024, 128, mr.lkey)
		ok_wc(p.send(peer.buf + 512, 128, peer.lkey), f'{tag}: send into it')
		ok_wc(wait_wc(p.cq_b)[0], f'{tag}: receive into it')
		same(mr.read(128, 1024), data, f'{tag}: received bytes')
	if access & RW:
		data = pattern(5, 300)
		peer.write(data, 300, 0)
		ok_wc(p.write(peer.buf, 300, peer.lkey, mr.buf + PAGE - 100,
			      mr.rkey), f'{tag}: RDMA write')
		same(mr.read(300, PAGE - 100), data, f'{tag}: written bytes')
	if access & RR:
		data = pattern(7, 200)
		mr.write(data, 200, 2048)
		ok_wc(p.read(peer.buf + 1024, 200, peer.lkey, mr.buf + 2048,
			     mr.rkey), f'{tag}: RDMA read')
		same(peer.read(200, 1024), data, f'{tag}: read bytes')
	if access & RA:
		mr.write(struct.pack('=Q', 40), 8, 8)
		ok_wc(p.atomic(e.IBV_WR_ATOMIC_FETCH_AND_ADD, peer.buf + 8,
			       peer.lkey, mr.buf + 8, mr.rkey, 2),
		      f'{tag}: fetch and add')
		got = struct.unpack('=QQ', peer.read(8, 8) + mr.read(8, 8))
		if got != (40, 42):
			raise Fail(f'{tag}: fetch and add returned {got[0]}, left {got[1]}')


REG_ACCESS = [0, LW, LW | RW, RR, LW | RR, LW | RA, LW | MWB, LW | RO,
	      LW | RW | RR | RA | MWB | RO]

for _acc in REG_ACCESS:
	def _reg(c, acc=_acc):
		mr = c.mr(acc)
		if mr.lkey == 0 and mr.rkey == 0:
			raise Fail('MR has neither lkey nor rkey')
		exercise(c, mr, acc, access_str(acc))
	case(f'reg_mr {access_str(_acc)}: registered, its traffic runs, bytes checked')(_reg)


def needs_hugepage(d):
	with open('/proc/meminfo') as f:
		free = [int(l.split()[1]) for l in f if l.startswith('HugePages_Free:')]
	if not free or free[0] < 1:
		return 'no free huge page (user_pyverbs.sh reserves some)'
	return None


def check_huge(addr):
	"""The mapping that starts at addr is on 2 MiB pages (smaps)."""
	with open(f'/proc/{os.getpid()}/smaps') as f:
		smaps = f.read()
	m = re.search(rf'^{addr:x}-[0-9a-f]+ .*\n(?:[A-Z].*\n)*?KernelPageSize: +(\d+) kB',
		      smaps, re.M)
	if not m or int(m.group(1)) != HPAGE >> 10:
		raise Fail(f'the buffer at {addr:#x} is not on a 2 MiB page: '
			   f'{m.group(1) + " kB" if m else "not in smaps"}')


def _hugetlb(c):
	"""IBV_ACCESS_HUGETLB: pyverbs maps the buffer MAP_HUGETLB (one 2 MiB
	page), libibverbs passes the flag on (the kernel's IB_ACCESS_HUGETLB);
	the MR's traffic runs and its bytes are checked."""
	acc = LW | RW | RR | RA | HUGE
	mr = c.mr(acc)
	check_huge(mr.buf)
	exercise(c, mr, acc, access_str(acc))


case('reg_mr with HUGETLB over a 2 MiB huge page: traffic runs, bytes checked',
     needs_hugepage)(_hugetlb)


def _no_remote(c):
	"""An MR without remote access: the remote write and read fail."""
	mr = c.mr(LW)
	peer = c.mr(LW)
	p = c.rc_pair()
	err_wc(p.write(peer.buf, 64, peer.lkey, mr.buf, mr.rkey),
	       e.IBV_WC_REM_ACCESS_ERR, 'RDMA write into LOCAL_WRITE-only MR')
	p = c.rc_pair()
	err_wc(p.read(peer.buf, 64, peer.lkey, mr.buf, mr.rkey),
	       e.IBV_WC_REM_ACCESS_ERR, 'RDMA read of LOCAL_WRITE-only MR')
	if mr.read(64, 0) != bytes(64):
		raise Fail('the refused write changed the MR')


case('reg_mr LOCAL_WRITE: remote write and read refused (REM_ACCESS_ERR)')(_no_remote)


def dma_lkey(d):
	"""vhca's local DMA key, its one PA context (debugfs mkeys), or None."""
	try:
		with open(f'/sys/kernel/debug/vhca/{d.name}/mkeys') as f:
			for line in f:
				w = line.split()
				if len(w) > 3 and w[2] == 'VALID' and w[3] == 'PA':
					return int(w[1], 16)
	except OSError:
		pass
	return None


def needs_dma_lkey(d):
	if d.kind != 'vhca':
		return 'vhca only: its local DMA key is read from its debugfs'
	if dma_lkey(d) is None:
		return f'no PA context in /sys/kernel/debug/vhca/{d.name}/mkeys'
	return None


def _dma_lkey(c):
	"""The kernel's local DMA key, whose addresses are physical ones, in
	a user WQE: refused as a send's source, a write's source, a read's
	target and a receive's buffer, no byte of the peer MR touched."""
	key = dma_lkey(c.d)
	peer = c.mr(LW | RW | RR)
	data = pattern(9, LEN)
	peer.write(data, LEN, 0)
	p = c.rc_pair()
	err_wc(p.send(0, 64, key), e.IBV_WC_LOC_PROT_ERR,
	       'SEND from the local DMA key')
	p = c.rc_pair()
	err_wc(p.write(0, 64, key, peer.buf, peer.rkey), e.IBV_WC_LOC_PROT_ERR,
	       'RDMA write from the local DMA key')
	p = c.rc_pair()
	err_wc(p.read(0, 64, key, peer.buf, peer.rkey), e.IBV_WC_LOC_PROT_ERR,
	       'RDMA read into the local DMA key')
	p = c.rc_pair()
	p.recv(p.b, 0, 64, key)
	err_wc(p.send(peer.buf, 64, peer.lkey), e.IBV_WC_REM_OP_ERR,
	       'SEND to a receive naming the local DMA key')
	err_wc(wait_wc(p.cq_b)[0], e.IBV_WC_LOC_QP_OP_ERR,
	       'the receive naming the local DMA key')
	same(peer.read(LEN, 0), data, 'the peer MR')


case('the local DMA key in a user WQE or receive: refused',
     needs_dma_lkey)(_dma_lkey)

for _acc in (RW, RA, RW | RR, RA | RR):
	def _refuse(c, acc=_acc):
		refused(lambda: c.mr(acc), errno.EINVAL, f'reg_mr {access_str(acc)}')
	case(f'reg_mr {access_str(_acc)} without LOCAL_WRITE: EINVAL')(_refuse)


class IbvMr(ctypes.Structure):
	_fields_ = [('context', ctypes.c_void_p), ('pd', ctypes.c_void_p),
		    ('addr', ctypes.c_void_p), ('length', ctypes.c_size_t),
		    ('handle', ctypes.c_uint32), ('lkey', ctypes.c_uint32),
		    ('rkey', ctypes.c_uint32)]


def libibverbs():
	lib = ctypes.CDLL('libibverbs.so.1', use_errno=True)
	lib.ibv_reg_mr_iova.restype = ctypes.POINTER(IbvMr)
	lib.ibv_reg_mr_iova.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
					ctypes.c_size_t, ctypes.c_uint64,
					ctypes.c_int]
	lib.ibv_dereg_mr.argtypes = [ctypes.POINTER(IbvMr)]
	return lib


def c_pointer(obj, off, want, what):
	"""The one C pointer field of a pyverbs object whose target holds
	the u64 want at offset off. Every field of a PD or MW object is a
	pointer (pd.pxd, mr.pxd), so reading through each is safe."""
	hits = []
	for slot in range(16, type(obj).__basicsize__, 8):
		p = ctypes.c_void_p.from_address(id(obj) + slot).value
		if p and ctypes.c_uint64.from_address(p + off).value == want:
			hits.append(p)
	if len(hits) != 1:
		raise Fail(f'{len(hits)} candidate {what} pointers in the object')
	return hits[0]


def set_mw_rkey(mw, rkey):
	"""mw->rkey = rkey, what a C caller does after an IBV_WR_BIND_MW
	(pyverbs 44 cannot): struct ibv_mw is context, pd, then u32 rkey and
	u32 handle."""
	p = c_pointer(mw, 16, mw.rkey | mw.handle << 32, 'ibv_mw')
	ctypes.c_uint32.from_address(p + 16).value = rkey


def pd_pointer(pd):
	"""The struct ibv_pd * inside a pyverbs PD.

	pyverbs 44's MR has no iova (mr.pyx calls ibv_reg_mr only), so
	ibv_reg_mr_iova is called through ctypes, in the PD pyverbs made. The
	PD object keeps the pointer in a C field: the one that points at a
	struct ibv_pd whose handle (the u32 after the context pointer, then 4
	bytes of padding) is pd.handle."""
	return c_pointer(pd, 8, pd.handle, 'ibv_pd')


def reg_iova(c, length, iova, access):
	lib = libibverbs()
	m, addr = c.anon(length)
	mr = lib.ibv_reg_mr_iova(pd_pointer(c.pd), addr, length, iova, access)
	if not mr:
		raise Fail(f'ibv_reg_mr_iova: {os.strerror(ctypes.get_errno())}')
	return m, addr, mr, lib


def _iova(c, iova):
	m, addr, imr, lib = reg_iova(c, LEN, iova, ALL_REMOTE)
	try:
		k = imr.contents
		peer = c.mr(LW)
		p = c.rc_pair()
		data = pattern(9, 500)
		peer.write(data, 500, 0)
		ok_wc(p.write(peer.buf, 500, peer.lkey, iova + 3000, k.rkey),
		      f'RDMA write at iova {iova:#x}+3000')
		same(m[3000:3500], data, 'bytes at the buffer\'s offset 3000')
		m[100:300] = pattern(11, 200)
		ok_wc(p.read(peer.buf + 1024, 200, peer.lkey, iova + 100, k.rkey),
		      'RDMA read at iova+100')
		same(peer.read(200, 1024), pattern(11, 200), 'read bytes')
		# The lkey addresses the same iova space.
		p.recv(p.b, peer.buf + 2048, 64, peer.lkey)
		ok_wc(p.send(iova + 100, 64, k.lkey), 'send from iova+100 by lkey')
		ok_wc(wait_wc(p.cq_b)[0], 'receive')
		same(peer.read(64, 2048), pattern(11, 64), 'sent bytes')
		# The process address is not in the MR unless iova spans it.
		if not iova <= addr < iova + LEN:
			p = c.rc_pair()
			err_wc(p.write(peer.buf, 8, peer.lkey, addr, k.rkey),
			       e.IBV_WC_REM_ACCESS_ERR,
			       'RDMA write at the process address')
	finally:
		# Before the PD goes (Case.close)
		if lib.ibv_dereg_mr(imr):
			raise Fail('ibv_dereg_mr of the iova MR failed')


case('reg_mr_iova at iova 0x7e0000000000: write, read and send at iova, bytes checked')(
	lambda c: _iova(c, 0x7e0000000000))
case('reg_mr_iova at iova 0 (the man page: as ZERO_BASED): bytes checked')(
	lambda c: _iova(c, 0))


def _zero_based(c):
	mr = c.mr(ALL_REMOTE | ZB)
	peer = c.mr(LW)
	p = c.rc_pair()
	data = pattern(13, 256)
	peer.write(data, 256, 0)
	wc = p.write(peer.buf, 256, peer.lkey, 1000, mr.rkey)
	c.expect('zero_based', status_str(wc.status), 'SUCCESS',
		 'RDMA write at offset 1000 of a ZERO_BASED MR')
	if wc.status == e.IBV_WC_SUCCESS:
		same(mr.read(256, 1000), data, 'bytes at offset 1000')


RXE61['zero_based'] = (
	'REM_ACCESS_ERR', 'rxe 6.1 keeps the flag but addresses the MR by the '
	'virtual address libibverbs passes as hca_va; ibv_reg_mr(3) addresses '
	'a ZERO_BASED MR by offset')
case('reg_mr ZERO_BASED: RDMA write at an offset from the MR start, bytes checked')(_zero_based)


def _dereg_twice(c):
	mr = c.mr(ALL_REMOTE)
	lkey, rkey, buf = mr.lkey, mr.rkey, mr.buf
	peer = c.mr(LW)
	peer.write(pattern(1, 64), 64, 0)
	mr.close()
	mr.close()	# pyverbs: the second close is a no-op
	p = c.rc_pair()
	err_wc(p.write(peer.buf, 64, peer.lkey, buf, rkey),
	       e.IBV_WC_REM_ACCESS_ERR, 'RDMA write by the deregistered rkey')
	p = c.rc_pair()
	p.recv(p.b, peer.buf + 64, 64, peer.lkey)
	c.expect('dereg_lkey', status_str(p.send(buf, 64, lkey).status),
		 'LOC_PROT_ERR', 'send from the deregistered lkey')


RXE61['dereg_lkey'] = (
	'LOC_QP_OP_ERR', 'rxe 6.1 fails an SGE whose lkey has no MR as a QP '
	'operation error; the IBA gives an invalid L_Key Local Protection Error')
case('dereg_mr twice: second a no-op, the old lkey and rkey refused')(_dereg_twice)


def _dereg_bound(c):
	"""ibv_reg_mr(3): ibv_dereg_mr fails while a window is bound."""
	mr = c.mr(LW | RW | MWB)
	mw = MW(c.pd, e.IBV_MW_TYPE_1)
	p = c.rc_pair()
	ok_wc(p.bind1(mw, mr, mr.buf, PAGE, RW), 'bind')
	# The text says it fails, not with what: rxe says EINVAL, vhca
	# EBUSY (mrcore's "MR in use").
	refused(mr.close, (errno.EINVAL, errno.EBUSY),
		'dereg_mr with a bound window')
	mw.close()
	mr.close()


def needs_mw1(d):
	if not d.attr.device_cap_flags & e.IBV_DEVICE_MEM_WINDOW or not d.attr.max_mw:
		return 'no memory windows (IBV_DEVICE_MEM_WINDOW, max_mw)'
	return None


def needs_mw2(d):
	if not d.attr.device_cap_flags & e.IBV_DEVICE_MEM_WINDOW_TYPE_2B or not d.attr.max_mw:
		return 'no type 2B memory windows'
	return None


case('dereg_mr with a bound type 1 window fails (EINVAL or EBUSY), then window and MR freed',
     needs_mw1)(_dereg_bound)


def needs_odp(d, implicit=False):
	need = e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV | \
		e.IBV_ODP_SUPPORT_WRITE | e.IBV_ODP_SUPPORT_READ
	if not d.odp.general_caps & e.IBV_ODP_SUPPORT:
		return 'no ODP (odp_caps.general_caps lacks IBV_ODP_SUPPORT)'
	if d.odp.rc_odp_caps & need != need:
		return f'RC ODP caps {d.odp.rc_odp_caps:#x} lack send/recv/write/read'
	if implicit and not d.odp.general_caps & e.IBV_ODP_SUPPORT_IMPLICIT:
		return 'no implicit ODP (IBV_ODP_SUPPORT_IMPLICIT)'
	return None


def odp_rounds(c, src, saddr, lkey, dst, daddr, rkey):
	"""Write src (LEN bytes) to the first LEN bytes of dst through the
	keys, then MADV_DONTNEED both mappings whole; the next round must
	fault fresh pages in on both sides."""
	p = c.rc_pair()
	for i in range(4):
		data = pattern(20 + i, LEN)
		src[:] = data
		ok_wc(p.write(saddr, LEN, lkey, daddr, rkey), f'round {i}: RDMA write')
		same(dst[:LEN], data, f'round {i}: written bytes')
		ok_wc(p.read(saddr + 64, 64, lkey, daddr + PAGE, rkey),
		      f'round {i}: RDMA read')
		same(src[64:128], data[PAGE:PAGE + 64], f'round {i}: read bytes')
		src.madvise(mmap.MADV_DONTNEED)
		dst.madvise(mmap.MADV_DONTNEED)
		if dst[:LEN] != bytes(LEN):
			raise Fail(f'round {i}: MADV_DONTNEED left data in place')


def _odp_explicit(c):
	src, saddr = c.anon()
	dst, daddr = c.anon()
	smr = c.mr(LW | ODP, address=saddr)
	dmr = c.mr(ALL_REMOTE | ODP, address=daddr)
	odp_rounds(c, src, saddr, smr.lkey, dst, daddr, dmr.rkey)


def _odp_implicit(c):
	src, saddr = c.anon()
	dst, daddr = c.anon()
	mr = MR(c.pd, 0, ALL_REMOTE | ODP, implicit=True)
	odp_rounds(c, src, saddr, mr.lkey, dst, daddr, mr.rkey)


def _odp_refused(c):
	refused(lambda: c.mr(LW | ODP), errno.EINVAL, 'reg_mr ON_DEMAND')


case('ODP explicit: 4 rounds of write and read with MADV_DONTNEED between, bytes checked',
     needs_odp)(_odp_explicit)
case('ODP implicit (addr 0, SIZE_MAX): 4 rounds with MADV_DONTNEED between, bytes checked',
     lambda d: needs_odp(d, True))(_odp_implicit)
case('ON_DEMAND on a device without ODP: EINVAL',
     lambda d: None if needs_odp(d) else 'the device has ODP')(_odp_refused)


def _odp_hugetlb(c):
	"""ibv_reg_mr(3): HUGETLB is "applicable with IBV_ACCESS_ON_DEMAND in
	explicit mode only", the application promising that "for this MR all
	pages are huge" and that it will "never do anything to break huge
	pages". So the MR covers one 2 MiB hugetlb page (an ordinary
	buffer would break the promise, and then the text promises nothing
	back); MADV_DONTNEED drops that page whole, the next fault gets a
	fresh huge page, and the ODP rounds run over it, bytes checked."""
	src, saddr = c.anon()
	dst, daddr = c.anon(HPAGE, MAP_HUGETLB)
	check_huge(daddr)
	smr = c.mr(LW | ODP, address=saddr)
	dmr = c.mr(ALL_REMOTE | ODP | HUGE, length=HPAGE, address=daddr)
	odp_rounds(c, src, saddr, smr.lkey, dst, daddr, dmr.rkey)


def _odp_implicit_hugetlb(c):
	"""ibv_reg_mr(3): HUGETLB applies to explicit ODP only, so an
	implicit ODP MR with it is refused. The text names no errno; EINVAL
	is ib_core's (ib_umem_odp_alloc_implicit(), mlx5's through it)."""
	refused(lambda: MR(c.pd, 0, ALL_REMOTE | ODP | HUGE, implicit=True),
		errno.EINVAL, 'implicit ODP reg_mr with HUGETLB')


case('ODP explicit with HUGETLB over a 2 MiB huge page: 4 rounds with '
     'MADV_DONTNEED between, bytes checked',
     lambda d: needs_odp(d) or needs_hugepage(d))(_odp_hugetlb)
case('ODP implicit with HUGETLB: refused (EINVAL)',
     lambda d: needs_odp(d, True))(_odp_implicit_hugetlb)


def rdma_tool(*args):
	"""The output of iproute2's `rdma ARGS`; a failure of it fails the
	case."""
	r = subprocess.run(['rdma', *args], capture_output=True, text=True,
			   timeout=PROGRESS_TMO, check=False)
	if r.returncode:
		raise Fail(f'rdma {" ".join(args)}: status {r.returncode}: '
			   f'{r.stderr.strip()[:200]}')
	return r.stdout


def port_stats(d):
	"""Port PORT's hardware counters as `rdma statistic show link DEV/PORT`
	prints them ("link DEV/PORT NAME VALUE ..."): name -> value."""
	t = rdma_tool('statistic', 'show', 'link', f'{d.name}/{PORT}').split()
	return {t[i]: int(t[i + 1]) for i in range(len(t) - 1)
		if t[i + 1].isdigit() and not t[i].isdigit()}


def sysfs_stats(d, names):
	"""The same counters from /sys/class/infiniband/DEV/ports/PORT/hw_counters."""
	base = f'/sys/class/infiniband/{d.name}/ports/{PORT}/hw_counters'
	got = {}
	for n in names:
		try:
			with open(f'{base}/{n}') as f:
				got[n] = int(f.read())
		except OSError as ex:
			raise Fail(f'{base}/{n}: {ex.strerror}') from None
	return got


def mr_odp_attrs(d, mr):
	"""vhca's driver attributes of mr (this process's, by lkey) in
	`rdma -j -dd res show mr`, "drv_" dropped: name -> value."""
	out = rdma_tool('-j', '-dd', 'res', 'show', 'mr')
	for r in json.loads(out) if out.strip() else []:
		lkey = r.get('lkey')
		if isinstance(lkey, str):
			lkey = int(lkey, 16)
		if r.get('ifname') == d.name and r.get('pid') == os.getpid() and \
		   lkey == mr.lkey:
			return {k.removeprefix('drv_'): v for k, v in r.items()}
	raise Fail(f'rdma res show mr: no MR of lkey {mr.lkey:#x} of this process')


def attr_num(attrs, name, what):
	v = attrs.get(name)
	if v is None:
		raise Fail(f'{what}: no {name}')
	return v if isinstance(v, int) else int(v, 0)


# Port counters the ODP statistics case reads (drivers/vhca/stats.c):
# mrcore's faults and pages they mapped, the engine's faults (parked QPs
# and faults resolved in place).
ODP_STATS = ('odp_faults', 'odp_fault_pages', 'odp_qp_faults',
	     'odp_sync_faults')


def needs_odp_stats(d):
	if d.kind != 'vhca':
		return (f'ODP counters are vhca\'s; {d.kind} exports none (rxe 6.1 '
			'has no ODP)')
	return needs_odp(d) or (None if shutil.which('rdma') else
				'no rdma tool (iproute2)')


def _odp_stats(c):
	"""Seed 002, ODP Statistics: "ODP support includes an extensive set
	of statistics" (rdma-statistic(8)). The first access to an explicit
	ODP MR, an RDMA WRITE into its untouched pages, is counted by the MR
	(vhca's attributes in `rdma res show mr -dd`: nothing faulted or
	mapped before, both pages after) and by port 1's counters, which
	`rdma statistic` and sysfs hw_counters show alike."""
	d = c.d
	dst, daddr = c.anon()
	dmr = c.mr(ALL_REMOTE | ODP, address=daddr)
	peer = c.mr(LW)
	p = c.rc_pair()
	what = 'the new ODP MR'
	a = mr_odp_attrs(d, dmr)
	for n in ('odp_faults', 'odp_fault_pages', 'odp_mapped_pages'):
		if attr_num(a, n, what):
			raise Fail(f'{what}: {n} {attr_num(a, n, what)}, wanted 0')
	before = port_stats(d)
	data = pattern(50, LEN)
	peer.write(data, LEN, 0)
	ok_wc(p.write(peer.buf, LEN, peer.lkey, daddr, dmr.rkey),
	      'RDMA write into untouched ODP pages')
	a = mr_odp_attrs(d, dmr)
	after = port_stats(d)
	same(dst[:], data, 'written bytes')
	what = 'the ODP MR after the write'
	faults, pages, mapped = (attr_num(a, n, what) for n in
				 ('odp_faults', 'odp_fault_pages', 'odp_mapped_pages'))
	if faults < 1 or pages < LEN // PAGE or mapped != LEN // PAGE:
		raise Fail(f'{what}: odp_faults {faults}, odp_fault_pages {pages}, '
			   f'odp_mapped_pages {mapped}; wanted at least 1 and '
			   f'{LEN // PAGE}, and {LEN // PAGE}')
	missing = [n for n in ODP_STATS if n not in before or n not in after]
	if missing:
		raise Fail(f'rdma statistic: no {", ".join(missing)}')
	delta = {n: after[n] - before[n] for n in ODP_STATS}
	if delta['odp_faults'] < faults or delta['odp_fault_pages'] < pages or \
	   delta['odp_qp_faults'] + delta['odp_sync_faults'] < 1:
		raise Fail(f'port {PORT} counted ' +
			   ', '.join(f'{n} +{v}' for n, v in delta.items()) +
			   f' for the MR\'s {faults} faults of {pages} pages')
	# Nothing moves them now; sysfs serves a copy up to its lifespan
	# old (hw_counters/lifespan), rdma statistic reads them afresh.
	want = {n: after[n] for n in ODP_STATS}
	deadline = time.monotonic() + PROGRESS_TMO
	while (got := sysfs_stats(d, ODP_STATS)) != want:
		if time.monotonic() > deadline:
			raise Fail(f'hw_counters {got}, rdma statistic {want}')
		time.sleep(0.005)
	c.note(f'{d.name}: observed: the MR: odp_faults {faults}, '
	       f'odp_fault_pages {pages}; port {PORT}: ' +
	       ', '.join(f'{n} +{v}' for n, v in delta.items()))


case('ODP statistics: the first RDMA write into an ODP MR counted by the MR '
     '(rdma res show mr -dd) and the port (rdma statistic, hw_counters)',
     needs_odp_stats)(_odp_stats)


def mw_write(c, p, peer, rkey, raddr, tag, want=e.IBV_WC_SUCCESS):
	data = pattern(len(tag), 128)
	peer.write(data, 128, 0)
	wc = p.write(peer.buf, 128, peer.lkey, raddr, rkey)
	err_wc(wc, want, f'{tag}: RDMA write through the window')
	return data


def _mw1(c):
	mr = c.mr(LW | RW | MWB)
	peer = c.mr(LW)
	mw = MW(c.pd, e.IBV_MW_TYPE_1)
	p = c.rc_pair()
	old = mw.rkey
	ok_wc(p.bind1(mw, mr, mr.buf + PAGE, PAGE, RW), 'ibv_bind_mw')
	if mw.rkey == old:
		raise Fail('ibv_bind_mw left the window\'s rkey unchanged')
	data = mw_write(c, p, peer, mw.rkey, mr.buf + PAGE + 40, 'bound')
	same(mr.read(128, PAGE + 40), data, 'bytes through the window')
	# Rebinding with length 0 invalidates a type 1 window.
	ok_wc(p.bind1(mw, mr, mr.buf, 0, RW), 'ibv_bind_mw length 0')
	mw_write(c, p, peer, mw.rkey, mr.buf + PAGE + 40, 'unbound',
		 e.IBV_WC_REM_ACCESS_ERR)
	mw.close()


def _mw1_outside(c):
	mr = c.mr(LW | RW | MWB)
	peer = c.mr(LW)
	mw = MW(c.pd, e.IBV_MW_TYPE_1)
	p = c.rc_pair()
	ok_wc(p.bind1(mw, mr, mr.buf + PAGE, PAGE, RW), 'ibv_bind_mw')
	data = pattern(1, 128)
	peer.write(data, 128, 0)
	wc = p.write(peer.buf, 128, peer.lkey, mr.buf + 64, mw.rkey)
	c.expect('mw1_outside', status_str(wc.status), 'REM_ACCESS_ERR',
		 'RDMA write below the window')
	if wc.status != e.IBV_WC_SUCCESS and mr.read(128, 64) != bytes(128):
		raise Fail('the refused write changed the MR')
	mw.close()


RXE61['mw1_outside'] = (
	'SUCCESS', 'rxe 6.1 checks a window\'s rkey, then the range of the MR '
	'under it, not the window\'s own bounds (rxe_resp.c check_rkey): a bug; '
	'the IBA (C10-75 and 10.6.7.2) limits access to the window')


def _mw1_inv(c, remote):
	"""o10-37.2.26: a type 1 window is not invalidated by LOCAL_INV or
	SEND_WITH_INV; the work request fails and the window stays bound."""
	mr = c.mr(LW | RW | MWB)
	peer = c.mr(LW)
	mw = MW(c.pd, e.IBV_MW_TYPE_1)
	p = c.rc_pair()
	ok_wc(p.bind1(mw, mr, mr.buf, PAGE, RW), 'ibv_bind_mw')
	if remote:
		p.recv(p.b, peer.buf + 1024, 64, peer.lkey)
		wc = p.send(peer.buf, 64, peer.lkey, inv_rkey=mw.rkey)
		c.expect('mw1_remote_inv', status_str(wc.status) != 'SUCCESS', True,
			 'SEND_WITH_INV of a type 1 window completes in error')
		rwc = wait_wc(p.cq_b)[0]
		if rwc.status == e.IBV_WC_SUCCESS:
			raise Fail('the receive of SEND_WITH_INV of a type 1 window succeeded')
	else:
		wc = p.local_inv(p.b, p.cq_b, mw.rkey)
		# An error completion; rxe reports LOC_QP_OP_ERR, vhca
		# LOC_PROT_ERR (every refused LOCAL_INV, vhca.rst).
		if wc.status not in (e.IBV_WC_LOC_QP_OP_ERR, e.IBV_WC_LOC_PROT_ERR):
			raise Fail('LOCAL_INV of a type 1 window: completion '
				   f'{status_str(wc.status)}, wanted LOC_QP_OP_ERR '
				   'or LOC_PROT_ERR')
	q = c.rc_pair()
	data = mw_write(c, q, peer, mw.rkey, mr.buf + 8, 'still bound')
	same(mr.read(128, 8), data, 'bytes through the window')
	mw.close()
	mr.close()



case('MW type 1: alloc, ibv_bind_mw, RDMA write through it, bytes checked, '
     'zero-length rebind invalidates, dealloc', needs_mw1)(_mw1)
case('MW type 1: RDMA write outside the window refused', needs_mw1)(_mw1_outside)
case('MW type 1: LOCAL_INV fails (LOC_QP_OP_ERR or LOC_PROT_ERR), the window stays bound',
     needs_mw1)(lambda c: _mw1_inv(c, False))
RXE61['mw1_remote_inv'] = (
	False, 'rxe 6.1 acks the send and fails only the receive '
	'(REM_INV_REQ_ERR, class J, no NAK); o10-37.2.26 refuses the request')
case('MW type 1: SEND_WITH_INV fails, the window stays bound',
     needs_mw1)(lambda c: _mw1_inv(c, True))


def _mw2(c, how):
	mr = c.mr(LW | RW | MWB)
	peer = c.mr(LW)
	mw = MW(c.pd, e.IBV_MW_TYPE_2)
	p = c.rc_pair()
	wc, rkey = p.bind2(mw, mr, mr.buf + PAGE, PAGE, RW)
	ok_wc(wc, 'IBV_WR_BIND_MW')
	data = mw_write(c, p, peer, rkey, mr.buf + PAGE + 8, 'bound')
	same(mr.read(128, PAGE + 8), data, 'bytes through the window')
	if how == 'local':
		ok_wc(p.local_inv(p.b, p.cq_b, rkey), 'LOCAL_INV')
	elif how == 'remote':
		p.recv(p.b, peer.buf + 1024, 64, peer.lkey)
		ok_wc(p.send(peer.buf, 64, peer.lkey, inv_rkey=rkey), 'SEND_WITH_INV')
		wc = wait_wc(p.cq_b)[0]
		ok_wc(wc, 'receive of SEND_WITH_INV')
		if wc.imm_data != rkey:
			raise Fail(f'receive: invalidated rkey {wc.imm_data:#x}, '
				   f'wanted {rkey:#x}')
		c.expect('mw2_with_inv', bool(wc.wc_flags & e.IBV_WC_WITH_INV), True,
			 f'IBV_WC_WITH_INV in wc_flags {wc.wc_flags:#x}')
	elif how == 'rebind':
		# The seed: a type 2 window must be invalidated before rebinding.
		wc, _ = p.bind2(mw, mr, mr.buf, PAGE, RW)
		err_wc(wc, e.IBV_WC_MW_BIND_ERR, 'rebind of a bound type 2 window')
		mw.close()	# before its MR (PD.close frees MRs first)
		return
	else:
		mw.close()
	q = c.rc_pair()
	mw_write(c, q, peer, rkey, mr.buf + PAGE + 8, 'after ' + how,
		 e.IBV_WC_REM_ACCESS_ERR)
	if how != 'dealloc':
		# Invalidated, it binds again with a new key (q is in error
		# now: a third pair).
		r = c.rc_pair()
		wc, rkey2 = r.bind2(mw, mr, mr.buf, PAGE, RW)
		ok_wc(wc, 'IBV_WR_BIND_MW again')
		data = mw_write(c, r, peer, rkey2, mr.buf + 16, 'rebound')
		same(mr.read(128, 16), data, 'bytes through the rebound window')
		mw.close()


case('MW type 2: IBV_WR_BIND_MW, write through it, bytes checked, LOCAL_INV '
     'refuses the key, rebind', needs_mw2)(lambda c: _mw2(c, 'local'))
case('MW type 2: SEND_WITH_INV invalidates (receiver sees WITH_INV and the key), '
     'rebind', needs_mw2)(lambda c: _mw2(c, 'remote'))
case('MW type 2: dealloc while bound refuses the key', needs_mw2)(
	lambda c: _mw2(c, 'dealloc'))
case('MW type 2: rebind without invalidate fails (MW_BIND_ERR)', needs_mw2)(
	lambda c: _mw2(c, 'rebind'))


def _mw_wrong_type2(c):
	"""ibv_bind_mw(3) binds type 1 windows only: EINVAL for type 2."""
	mr = c.mr(LW | RW | MWB)
	mw = MW(c.pd, e.IBV_MW_TYPE_2)
	p = c.rc_pair()
	refused(lambda: p.bind1(mw, mr, mr.buf, PAGE, RW), errno.EINVAL,
		'ibv_bind_mw of a type 2 window')


def _mw_wrong_type1(c):
	"""IBV_WR_BIND_MW is for type 2 windows (ibv_post_send(3)); a type 1
	window in it is a bind error."""
	mr = c.mr(LW | RW | MWB)
	peer = c.mr(LW)
	mw = MW(c.pd, e.IBV_MW_TYPE_1)
	p = c.rc_pair()
	wc, rkey = p.bind2(mw, mr, mr.buf, PAGE, RW)
	c.expect('mw_wrong_type1', status_str(wc.status), 'MW_BIND_ERR',
		 'IBV_WR_BIND_MW of a type 1 window')
	if wc.status == e.IBV_WC_SUCCESS:
		data = mw_write(c, p, peer, rkey, mr.buf + 8, 'bound by WR')
		same(mr.read(128, 8), data, 'bytes through the window')
	mw.close()


# librxe's ibv_bind_mw is itself an IBV_WR_BIND_MW work request in the
# send ring (rxe_bind_mw in providers/rxe/rxe.c): the kernel cannot tell
# the two apart, for rxe or any device bound to librxe.
RXE61['mw2_with_inv'] = (
	False, 'rxe 6.1 reports the invalidated rkey but not IBV_WC_WITH_INV '
	'in the user CQE\'s wc_flags; ibv_poll_cq(3) sets it')
LIBRXE['mw_wrong_type1'] = (
	'SUCCESS', 'librxe writes ibv_bind_mw as the same IBV_WR_BIND_MW WQE, so '
	'no device under librxe can tell them apart; ibv_post_send(3) binds '
	'type 2 windows with IBV_WR_BIND_MW')

case('MW wrong type: ibv_bind_mw of a type 2 window: EINVAL', needs_mw2)(_mw_wrong_type2)
case('MW wrong type: IBV_WR_BIND_MW of a type 1 window', needs_mw1)(_mw_wrong_type1)


def _mw_no_bind_right(c, mwtype):
	"""Seed 002: a window is bound to an MR "registered using the
	IBV_ACCESS_MW_BIND access flag" (IBA C10-73). To an MR without it the
	bind completes with MW_BIND_ERR (ibv_poll_cq(3): a failure binding a
	MW to a MR; rxe 6.1's rxe_check_bind_mw() and vhca's engine both
	give it), and neither the window's rkey nor the one the bind named
	reaches the MR."""
	mr = c.mr(LW | RW)
	peer = c.mr(LW)
	mw = MW(c.pd, mwtype)
	old = mw.rkey
	p = c.rc_pair()
	if mwtype == e.IBV_MW_TYPE_2:
		wc, new = p.bind2(mw, mr, mr.buf, PAGE, RW)
	else:
		wc = p.bind1(mw, mr, mr.buf, PAGE, RW)
		# librxe moves mw->rkey when it posts; the caller is to undo
		# that on an error completion (providers/rxe/rxe.c).
		new = mw.rkey
	err_wc(wc, e.IBV_WC_MW_BIND_ERR,
	       f'bind of a type {mwtype} window to an MR without MW_BIND')
	for rkey, what in ((old, 'the window\'s rkey'),
			   (new, 'the rkey the bind named')):
		# The QP of a failed WR is in error: a new pair each time.
		mw_write(c, c.rc_pair(), peer, rkey, mr.buf + 8, what,
			 e.IBV_WC_REM_ACCESS_ERR)
	if mr.read(PAGE, 0) != bytes(PAGE):
		raise Fail('a refused write changed the MR')
	mw.close()


case('MW type 2: IBV_WR_BIND_MW to an MR without MW_BIND: MW_BIND_ERR, '
     'no access by either rkey', needs_mw2)(
	lambda c: _mw_no_bind_right(c, e.IBV_MW_TYPE_2))
case('MW type 1: ibv_bind_mw to an MR without MW_BIND: MW_BIND_ERR, '
     'no access by either rkey', needs_mw1)(
	lambda c: _mw_no_bind_right(c, e.IBV_MW_TYPE_1))


# What each driver's query_device advertises for windows and ODP: vhca,
# drivers/vhca/verbs.c vhca_query_device(); rxe 6.1, RXE_DEVICE_CAP_FLAGS
# in rxe_param.h and no odp_caps at all. Device type -> attribute -> value.
ODP_RC_ALL = (e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV |
	      e.IBV_ODP_SUPPORT_WRITE | e.IBV_ODP_SUPPORT_READ |
	      e.IBV_ODP_SUPPORT_ATOMIC | e.IBV_ODP_SUPPORT_SRQ_RECV)
ADVERTISED = {
	'vhca': {'MEM_WINDOW': True, 'MEM_WINDOW_TYPE_2B': True,
		 'general_caps': e.IBV_ODP_SUPPORT | e.IBV_ODP_SUPPORT_IMPLICIT,
		 'rc_odp_caps': ODP_RC_ALL, 'uc_odp_caps': 0,
		 'ud_odp_caps': e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV |
				e.IBV_ODP_SUPPORT_SRQ_RECV},
	'rxe': {'MEM_WINDOW': True, 'MEM_WINDOW_TYPE_2B': True,
		'general_caps': 0, 'rc_odp_caps': 0, 'uc_odp_caps': 0,
		'ud_odp_caps': 0},
}


def flag_str(v):
	return str(v) if isinstance(v, bool) else f'{v:#x}'


def _caps(c):
	"""Seed 002: windows are there "if and only [if] the hardware
	supports it", ODP if "both the hardware and the kernel support it",
	and ibv_query_device says which. DEV's windows and ODP attributes are
	its driver's, through ibv_query_device and ibv_query_device_ex alike;
	max_mw is 0 exactly when no window type is advertised; with no
	IBV_ODP_SUPPORT, no transport claims ODP."""
	d = c.d
	odp = d.odp
	got = {'general_caps': odp.general_caps, 'rc_odp_caps': odp.rc_odp_caps,
	       'uc_odp_caps': odp.uc_odp_caps, 'ud_odp_caps': odp.ud_odp_caps}
	bad = []
	for name in ('MEM_WINDOW', 'MEM_WINDOW_TYPE_2B'):
		bit = getattr(e, 'IBV_DEVICE_' + name)
		got[name] = bool(d.attr.device_cap_flags & bit)
		if bool(d.attr_ex.device_cap_flags_ex & bit) != got[name]:
			bad.append(f'{name}: device_cap_flags {got[name]}, '
				   f'device_cap_flags_ex {not got[name]}')
	for name, want in ADVERTISED[d.kind].items():
		if got[name] != want:
			bad.append(f'{name} {flag_str(got[name])}, wanted '
				   f'{flag_str(want)}')
	if bool(d.attr.max_mw) != (got['MEM_WINDOW'] or got['MEM_WINDOW_TYPE_2B']):
		bad.append(f'max_mw {d.attr.max_mw} with MEM_WINDOW '
			   f'{got["MEM_WINDOW"]}, MEM_WINDOW_TYPE_2B '
			   f'{got["MEM_WINDOW_TYPE_2B"]}')
	if not odp.general_caps & e.IBV_ODP_SUPPORT and \
	   odp.rc_odp_caps | odp.uc_odp_caps | odp.ud_odp_caps:
		bad.append('transport ODP caps without IBV_ODP_SUPPORT')
	if bad:
		raise Fail('; '.join(bad))


case('query_device: MEM_WINDOW, MEM_WINDOW_TYPE_2B, max_mw and odp_caps '
     'are what the driver advertises',
     lambda d: None if d.kind in ADVERTISED else
     f'no advertised attributes known for device type {d.kind}')(_caps)


def needs_atomic(d):
	if d.attr.atomic_caps == e.IBV_ATOMIC_NONE:
		return 'atomic_caps is IBV_ATOMIC_NONE'
	return None


OPS = [(e.IBV_WR_ATOMIC_CMP_AND_SWP, 'CMP_AND_SWP'),
       (e.IBV_WR_ATOMIC_FETCH_AND_ADD, 'FETCH_AND_ADD')]


def _atomic(c, op, bad):
	acc = LW | RW if bad == 'access' else ALL_REMOTE
	mr = c.mr(acc)
	peer = c.mr(LW)
	mr.write(struct.pack('=Q', 0x1122334455667788), 8, 64)
	peer.write(struct.pack('=Q', 0xdead), 8, 0)
	p = c.rc_pair()
	lkey, rkey, raddr = peer.lkey, mr.rkey, mr.buf + 64
	if bad == 'lkey':
		lkey ^= 0x5a00
	elif bad == 'rkey':
		rkey ^= 0x5a00
	elif bad == 'align':
		raddr += 4
	if bad == 'align':
		# librxe (rxe's and vhca's provider) refuses a misaligned
		# atomic when it is posted, before the device sees it; the
		# IBA's REM_INV_REQ_ERR is for a device that gets one.
		refused(lambda: p.atomic(op, peer.buf, lkey, raddr, rkey, 5),
			errno.EINVAL, 'post of a misaligned atomic')
		return
	if op == e.IBV_WR_ATOMIC_CMP_AND_SWP:
		wc = p.atomic(op, peer.buf, lkey, raddr, rkey, 0x1122334455667788, 7)
		after = 7
	else:
		wc = p.atomic(op, peer.buf, lkey, raddr, rkey, 5)
		after = 0x112233445566778d
	want = {'lkey': e.IBV_WC_LOC_PROT_ERR, 'rkey': e.IBV_WC_REM_ACCESS_ERR,
		'align': e.IBV_WC_REM_INV_REQ_ERR,
		'access': e.IBV_WC_REM_ACCESS_ERR}.get(bad, e.IBV_WC_SUCCESS)
	err_wc(wc, want, 'atomic')
	old, new = struct.unpack('=QQ', peer.read(8, 0) + mr.read(8, 64))
	if bad is None:
		if (old, new) != (0x1122334455667788, after):
			raise Fail(f'returned {old:#x}, left {new:#x}')
	elif bad in ('rkey', 'align', 'access') and new != 0x1122334455667788:
		raise Fail(f'a refused atomic changed the target to {new:#x}')


for _op, _opn in OPS:
	case(f'atomic {_opn}: old value returned, new value in place', needs_atomic)(
		lambda c, op=_op: _atomic(c, op, None))
	for _bad, _what in (('lkey', 'bad lkey: LOC_PROT_ERR'),
			    ('rkey', 'bad rkey: REM_ACCESS_ERR'),
			    ('align', 'misaligned address: EINVAL at post (librxe)'),
			    ('access', 'MR without REMOTE_ATOMIC: REM_ACCESS_ERR')):
		case(f'atomic {_opn} {_what}', needs_atomic)(
			lambda c, op=_op, bad=_bad: _atomic(c, op, bad))


def _atomic_write(c, bad):
	"""ATOMIC WRITE (IBTA 9.4.7; librxe 44's ibv_wr_atomic_write): eight
	bytes stored at an aligned address of an MR with REMOTE_WRITE (no
	REMOTE_ATOMIC needed); the completion's opcode is IBV_WC_ATOMIC_WRITE."""
	acc = LW | RR if bad == 'access' else LW | RW
	mr = c.mr(acc)
	mr.write(struct.pack('=Q', 0x1122334455667788), 8, 64)
	p = c.rc_pair(ex_ops=e.IBV_QP_EX_WITH_ATOMIC_WRITE)
	rkey, raddr = mr.rkey, mr.buf + 64
	if bad == 'rkey':
		rkey ^= 0x5a00
	elif bad == 'align':
		raddr += 4
	val = 0x0102030405060708
	p.a.wr_start()
	p.a.wr_id = 9
	p.a.wr_flags = e.IBV_SEND_SIGNALED
	p.a.wr_atomic_write(rkey, raddr, struct.pack('=Q', val))
	p.a.wr_complete()
	wc = wait_wc(p.cq_a)[0]
	want = {'rkey': e.IBV_WC_REM_ACCESS_ERR,
		'align': e.IBV_WC_REM_INV_REQ_ERR,
		'access': e.IBV_WC_REM_ACCESS_ERR}.get(bad, e.IBV_WC_SUCCESS)
	c.expect('atomic_write', status_str(wc.status), status_str(want),
		 'completion status')
	if wc.status != e.IBV_WC_SUCCESS:
		got = struct.unpack('=Q', mr.read(8, 64))[0]
		if got != 0x1122334455667788:
			raise Fail(f'a failed ATOMIC WRITE changed the target to {got:#x}')
		return
	if wc.opcode != e.IBV_WC_ATOMIC_WRITE:
		raise Fail(f'completion opcode {wc.opcode}, wanted '
			   f'IBV_WC_ATOMIC_WRITE ({e.IBV_WC_ATOMIC_WRITE})')
	got = struct.unpack('=QQQ', mr.read(24, 56))
	if got != (0, val, 0):
		raise Fail(f'target and its neighbours: {[hex(x) for x in got]}')


RXE61['atomic_write'] = ('LOC_QP_OP_ERR', 'rxe of 6.1 has no ATOMIC WRITE '
			 '(added in 6.2) and fails the opcode librxe 44 writes')
case('ATOMIC WRITE: 8 bytes stored with REMOTE_WRITE, IBV_WC_ATOMIC_WRITE')(
	lambda c: _atomic_write(c, None))
for _bad, _what in (('rkey', 'bad rkey: REM_ACCESS_ERR'),
		    ('align', 'misaligned address: REM_INV_REQ_ERR'),
		    ('access', 'MR without REMOTE_WRITE: REM_ACCESS_ERR')):
	case(f'ATOMIC WRITE {_what}, target unchanged')(
		lambda c, bad=_bad: _atomic_write(c, bad))


def next_event(d, deadline):
	"""The next async event type, None when none came by deadline."""
	left = deadline - time.monotonic()
	r, _, _ = select.select([d.async_fd], [], [], max(left, 0))
	if not r:
		return None
	ev = d.ctx.get_async_event()
	t = ev.event_type
	ev.ack()
	return t


def needs_srq(d):
	if not d.attr.max_srq:
		return 'max_srq is 0'
	if d.async_fd is None:
		return 'the async event fd of the context was not found'
	return None


def _srq_limit(c):
	d = c.d
	srq = SRQ(c.pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
	p = c.rc_pair(srq)
	buf = c.mr(LW, length=8 * 256)
	src = c.mr(LW)
	for i in range(8):
		srq.post_recv(RecvWR(wr_id=i, num_sge=1,
				     sg=[SGE(buf.buf + i * 256, 256, buf.lkey)]))
	# Events left by earlier cases (QPs moved to error) are not ours.
	while next_event(d, time.monotonic()) is not None:
		pass
	srq.modify(SrqAttr(srq_limit=4), e.IBV_SRQ_LIMIT)
	got = set()
	for i in range(5):
		data = pattern(30 + i, 256)
		src.write(data, 256, 0)
		ok_wc(p.send(src.buf, 256, src.lkey), f'send {i}')
		wc = wait_wc(p.cq_b)[0]
		ok_wc(wc, f'receive {i} from the SRQ')
		same(buf.read(256, wc.wr_id * 256), data, f'received bytes {i}')
		if i == 3:
			# 4 of 8 left: not below the limit yet. The event of a
			# receive is raised before its completion, so one that
			# came is in the queue now.
			while (t := next_event(d, time.monotonic())) is not None:
				if t == e.IBV_EVENT_SRQ_LIMIT_REACHED:
					raise Fail('SRQ_LIMIT_REACHED with 4 receives left, limit 4')
	deadline = time.monotonic() + PROGRESS_TMO
	while (t := next_event(d, deadline)) is not None:
		got.add(t)
		if t == e.IBV_EVENT_SRQ_LIMIT_REACHED:
			break
	if e.IBV_EVENT_SRQ_LIMIT_REACHED not in got:
		raise Fail(f'no SRQ_LIMIT_REACHED within {PROGRESS_TMO} s '
			   f'(events {sorted(got)})')
	# The event disarms the limit (IBA 11.2.3.2).
	if srq.query().srq_limit != 0:
		raise Fail(f'srq_limit {srq.query().srq_limit} after the event, wanted 0')


case('SRQ: limit 4 armed with modify_srq, receives drawn below it, '
     'SRQ_LIMIT_REACHED on the async fd, bytes checked', needs_srq)(_srq_limit)


def post_writes(p, n, src, dst):
	"""n signalled RDMA WRITEs of 8 bytes from a, wr_ids 100.., not
	polled."""
	for i in range(n):
		src.write(struct.pack('=Q', 0x5100 + i), 8, 8 * i)
		wr = SendWR(wr_id=100 + i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
			    sg=[SGE(src.buf + 8 * i, 8, src.lkey)])
		wr.set_wr_rdma(dst.rkey, dst.buf + 8 * i)
		p.a.post_send(wr)


def _resize_cq(c):
	"""ibv_resize_cq(3) with completions pending: they stay, in order,
	in the resized CQ; one smaller than what it holds is refused (EINVAL)
	and the CQ is unchanged; traffic runs after each resize."""
	src, dst = c.mr(LW), c.mr(LW | RW)
	p = c.rc_pair()
	post_writes(p, 10, src, dst)
	deadline = time.monotonic() + PROGRESS_TMO
	while dst.read(8, 72) != struct.pack('=Q', 0x5109):
		if time.monotonic() > deadline:
			raise Fail(f'the 10th write did not land in {PROGRESS_TMO} s')
		time.sleep(0.001)
	refused(lambda: p.cq_a.resize(5), errno.EINVAL,
		'resize_cq to 5 with 10 completions pending')
	p.cq_a.resize(200)
	if p.cq_a.cqe < 200:
		raise Fail(f'cqe {p.cq_a.cqe} after a resize to 200')
	wcs = wait_wc(p.cq_a, 10)
	for i, wc in enumerate(wcs):
		ok_wc(wc, f'write {i}')
		if wc.wr_id != 100 + i:
			raise Fail(f'completion {i}: wr_id {wc.wr_id}, wanted {100 + i}')
	got = struct.unpack('=10Q', dst.read(80, 0))
	if got != tuple(0x5100 + i for i in range(10)):
		raise Fail(f'written words {[hex(x) for x in got]}')
	p.cq_a.resize(16)
	post_writes(p, 3, src, dst)
	for i, wc in enumerate(wait_wc(p.cq_a, 3)):
		ok_wc(wc, f'write {i} after shrinking to 16')


case('resize_cq with 10 completions pending: kept in order; below them EINVAL')(_resize_cq)


def _cq_overflow(c):
	"""A CQ that completions overflow: IBV_EVENT_CQ_ERR on the async fd
	(ibv_get_async_event(3))."""
	d = c.d
	while next_event(d, time.monotonic()) is not None:
		pass
	cq = c.cq(2)
	room = cq.cqe
	if room + 2 > 16:
		raise Fail(f'a CQ of 2 holds {room}: more than one QP can overflow')
	src, dst = c.mr(LW), c.mr(LW | RW)
	p = Pair(c, e.IBV_QPT_RC, cq_a=cq)
	post_writes(p, room + 2, src, dst)
	deadline = time.monotonic() + PROGRESS_TMO
	got = set()
	while (t := next_event(d, deadline)) is not None:
		got.add(t)
		if t == e.IBV_EVENT_CQ_ERR:
			return
	raise Fail(f'no CQ_ERR within {PROGRESS_TMO} s after {room + 2} '
		   f'completions into a CQ of {room} (events {sorted(got)})')


case('CQ overflow: IBV_EVENT_CQ_ERR on the async fd')(_cq_overflow)


def _ud(c):
	d = c.d
	p = c.ud_pair()
	ah = AH(c.pd, attr=AHAttr(port_num=PORT, is_global=1,
				  gr=GlobalRoute(dgid=d.gid, sgid_index=d.gid_index,
						 hop_limit=64)))
	src = c.mr(LW)
	dst = c.mr(LW)
	data = pattern(40, 512)
	src.write(data, 512, 0)
	p.recv(p.b, dst.buf, GRH_LEN + 512, dst.lkey)
	wr = SendWR(wr_id=9, opcode=e.IBV_WR_SEND, num_sge=1,
		    sg=[SGE(src.buf, 512, src.lkey)])
	wr.set_wr_ud(ah, p.b.qp_num, QKEY)
	p.a.post_send(wr)
	ok_wc(wait_wc(p.cq_a)[0], 'UD send')
	wc = wait_wc(p.cq_b)[0]
	ok_wc(wc, 'UD receive')
	if wc.byte_len != GRH_LEN + 512 or wc.src_qp != p.a.qp_num:
		raise Fail(f'receive: byte_len {wc.byte_len}, src_qp {wc.src_qp}, '
			   f'wanted {GRH_LEN + 512} and {p.a.qp_num}')
	if not wc.wc_flags & e.IBV_WC_GRH:
		raise Fail('receive without IBV_WC_GRH')
	same(dst.read(512, GRH_LEN), data, 'UD payload')
	grh = dst.read(GRH_LEN, 0)
	gid = gid_bytes(d.gid)
	if gid[:12] == b'\0' * 10 + b'\xff\xff':
		# RoCE v2 over IPv4: the IPv4 header in the GRH's last 20 bytes
		ip = grh[20:]
		if ip[0] >> 4 != 4 or ip[12:16] != gid[12:] or ip[16:20] != gid[12:]:
			raise Fail(f'GRH: IPv4 header {ip.hex()}, wanted '
				   f'{gid[12:].hex()} both ways')
	elif grh[0] >> 4 != 6 or grh[8:24] != gid or grh[24:40] != gid:
		raise Fail(f'GRH: {grh.hex()}, wanted version 6 and GID {gid.hex()}')


case('UD: send with an AH, receive, GRH holds the GIDs, bytes checked')(_ud)


def main():
	if len(sys.argv) != 2:
		print('usage: user_pyverbs.py DEV', file=sys.stderr)
		return 2
	name = sys.argv[1]
	pfx = f'pyverbs: {name}: '
	try:
		d = Dev(name)
	except Exception as ex:
		print(f'not ok - {pfx}open {name} # {ex}')
		return 1
	print(f'# {name}: GID index {d.gid_index} ({d.gid}), async fd '
	      f'{d.async_fd}, odp {d.odp.general_caps:#x}/{d.odp.rc_odp_caps:#x}, '
	      f'caps {d.attr.device_cap_flags:#x}, max_mw {d.attr.max_mw}, '
	      f'atomic_caps {d.attr.atomic_caps}')
	rc = 0
	for name_, needs, fn in CASES:
		why = needs(d) if needs else None
		if why:
			print(f'ok - {pfx}{name_} # SKIP {why}')
			continue
		c = None
		try:
			c = Case(d)
			fn(c)
			c.close()
			print(f'ok - {pfx}{name_}')
		except Exception as ex:		# a failure of any kind is a not ok
			rc = 1
			msg = str(ex).replace('\n', ' ')
			if not isinstance(ex, Fail):
				msg = f'{type(ex).__name__}: {msg}'
			print(f'not ok - {pfx}{name_} # {msg}')
			if c is not None:
				try:
					c.close()
				except Exception as ex2:
					print(f'#   cleanup: {ex2}')
		for n in (c.notes if c else []):
			print(f'#   pyverbs: {n}')
		sys.stdout.flush()
	print(f'# user_pyverbs: done, {len(CASES)} cases on {name}')
	return rc


if __name__ == '__main__':
	sys.exit(main())
