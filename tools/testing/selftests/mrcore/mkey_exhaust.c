// SPDX-License-Identifier: GPL-2.0
/*
 * mkey_exhaust: take every free memory key of an RDMA device through
 * /dev/mrcore_test and hold them until told to let go. The helper of
 * nvmeof_exhaust_vhca.sh (ANCHORS.md item 28): another consumer runs the
 * device's key table dry while NVMe-oF I/O runs over it.
 *
 *	mkey_exhaust DEV SECS
 *
 * Binds a context to DEV and registers one page of its own memory after
 * another with MRCT_REG (ib_reg_user_mr(): one key each) until the device
 * refuses, then prints, one line each, on stdout:
 *
 *	filled N ERRNO NAME	N keys taken; the next MRCT_REG failed
 *	again ERRNO NAME	a second try fails too: the table stays full
 *	checked N		each of the N keys resolves on the device
 *	ready
 *
 * "checked" reads 8 bytes through every key with MRCT_DEV_READ (the walker
 * of a vhca device) and compares them with the page the key was made for,
 * so a key that was lost or points elsewhere fails. Then it waits. On
 * SIGUSR1 it checks every key the same way again ("still N": it held
 * everything through the exhaustion), deregisters each ("released N") and
 * exits 0. On SIGTERM, or SECS seconds after "ready", it gives up and
 * exits 2; closing the file gives the keys back either way. Any other
 * failure prints "error: ..." and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"

#define PAGE		4096UL
/* Distinct pages the keys are made for; key i gets page i % NPAGES. */
#define NPAGES		4096UL
/* More keys than any device may have (MRC_MAX_MKEYS is 2^24). */
#define MAX_KEYS	(16UL << 20)

struct hog {
	int fd;
	uint8_t *buf;
	uint32_t *handles;
	unsigned long n;
};

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

static const char *err_name(int err)
{
	switch (err) {
	case ENOSPC:	return "ENOSPC";
	case ENOMEM:	return "ENOMEM";
	case EBUSY:	return "EBUSY";
	case EAGAIN:	return "EAGAIN";
	case ENOKEY:	return "ENOKEY";
	case EINVAL:	return "EINVAL";
	case EFAULT:	return "EFAULT";
	case ENODEV:	return "ENODEV";
	default:	return "other";
	}
}

/* What page @p of the buffer starts with: no two pages alike. */
static uint64_t page_tag(unsigned long p)
{
	return (p + 1) * 0x9e3779b97f4a7c15ULL;
}

static uint8_t *page_of(struct hog *h, unsigned long i)
{
	return h->buf + (i % NPAGES) * PAGE;
}

/* One more key, for the page of key h->n; 0 or -errno. */
static int hog_take(struct hog *h)
{
	struct mrct_reg reg = {
		.addr = (uintptr_t)page_of(h, h->n),
		.length = PAGE,
		.iova = (uintptr_t)page_of(h, h->n),
		.access = MRCT_ACCESS_LOCAL_WRITE,
		.pd = 0,
	};
	int err;

	err = xioctl(h->fd, MRCT_REG, &reg);
	if (err)
		return err;
	h->handles[h->n++] = reg.handle;
	return 0;
}

/* Every key held reads its own page's tag through the device; 0 or -1. */
static int hog_check(struct hog *h)
{
	unsigned long i;
	uint64_t got;
	int err;

	for (i = 0; i < h->n; i++) {
		struct mrct_xfer x = {
			.iova = (uintptr_t)page_of(h, i),
			.length = sizeof(got),
			.ptr = (uintptr_t)&got,
			.handle = h->handles[i],
			.pd = 0,
		};

		got = 0;
		err = xioctl(h->fd, MRCT_DEV_READ, &x);
		if (err) {
			printf("error: key %lu of %lu (handle %u): MRCT_DEV_READ %d %s\n",
			       i, h->n, h->handles[i], -err, err_name(-err));
			return -1;
		}
		if (got != page_tag(i % NPAGES)) {
			printf("error: key %lu of %lu reads %#llx, its page holds %#llx\n",
			       i, h->n, (unsigned long long)got,
			       (unsigned long long)page_tag(i % NPAGES));
			return -1;
		}
	}
	return 0;
}

static int hog_release(struct hog *h)
{
	struct mrct_dereg d = {};
	unsigned long i;
	int err;

	for (i = 0; i < h->n; i++) {
		d.handle = h->handles[i];
		err = xioctl(h->fd, MRCT_DEREG, &d);
		if (err) {
			printf("error: MRCT_DEREG of key %lu: %d %s\n", i, -err,
			       err_name(-err));
			return -1;
		}
	}
	return 0;
}

static int hog_open(struct hog *h, const char *dev)
{
	struct mrct_set_device sd = {};
	unsigned long p;
	int err;

	h->fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
	if (h->fd < 0) {
		printf("error: open /dev/%s: %s\n", MRCT_DEV_NAME, strerror(errno));
		return -1;
	}
	snprintf(sd.name, sizeof(sd.name), "%s", dev);
	err = xioctl(h->fd, MRCT_SET_DEVICE, &sd);
	if (err) {
		printf("error: MRCT_SET_DEVICE %s: %s\n", dev, strerror(-err));
		return -1;
	}
	h->buf = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	h->handles = calloc(MAX_KEYS, sizeof(*h->handles));
	if (h->buf == MAP_FAILED || !h->handles) {
		printf("error: out of memory\n");
		return -1;
	}
	for (p = 0; p < NPAGES; p++) {
		uint64_t tag = page_tag(p);

		memcpy(h->buf + p * PAGE, &tag, sizeof(tag));
	}
	return 0;
}

/* Until the device says no; prints "filled" and "again". 0 or -1. */
static int hog_fill(struct hog *h)
{
	int err, again;

	do {
		err = hog_take(h);
	} while (!err && h->n < MAX_KEYS);
	if (!err) {
		printf("error: %lu keys and the device still gives more\n", h->n);
		return -1;
	}
	printf("filled %lu %d %s\n", h->n, -err, err_name(-err));

	again = hog_take(h);
	if (!again) {
		printf("error: a key was free again right after %s\n",
		       err_name(-err));
		return -1;
	}
	printf("again %d %s\n", -again, err_name(-again));
	return 0;
}

int main(int argc, char **argv)
{
	struct hog h = {};
	sigset_t set;
	int sig;

	if (argc != 3 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: %s DEV SECS\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Blocked before "ready", so a signal sent right after it waits. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	if (hog_open(&h, argv[1]) || hog_fill(&h) || hog_check(&h))
		return 1;
	printf("checked %lu\nready\n", h.n);

	alarm(atoi(argv[2]));
	if (sigwait(&set, &sig) || sig != SIGUSR1) {
		printf("gave up: %s\n", sig == SIGALRM ? "deadline" : "signal");
		return 2;
	}
	if (hog_check(&h))
		return 1;
	printf("still %lu\n", h.n);
	if (hog_release(&h))
		return 1;
	printf("released %lu\n", h.n);
	close(h.fd);
	return 0;
}
