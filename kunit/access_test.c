// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore's access-flag rules: which combinations a
 * registration accepts, with which errno, and which count as writable.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include <rdma/mrcore.h>

#define LW	MRC_ACCESS_LOCAL_WRITE
#define RW	MRC_ACCESS_REMOTE_WRITE
#define RR	MRC_ACCESS_REMOTE_READ
#define RA	MRC_ACCESS_REMOTE_ATOMIC
#define MWB	MRC_ACCESS_MW_BIND

struct access_case {
	const char *desc;
	u32 access;
	int ret;
	bool writable;
};

static const struct access_case access_cases[] = {
	{ "none (local read only)", 0, 0, false },
	{ "LOCAL_WRITE", LW, 0, true },
	{ "REMOTE_READ", RR, 0, false },
	{ "REMOTE_WRITE without LOCAL_WRITE", RW, -EINVAL, true },
	{ "REMOTE_WRITE | LOCAL_WRITE", RW | LW, 0, true },
	{ "REMOTE_ATOMIC without LOCAL_WRITE", RA, -EINVAL, true },
	{ "REMOTE_ATOMIC | LOCAL_WRITE", RA | LW, 0, true },
	{ "REMOTE_WRITE | REMOTE_READ without LOCAL_WRITE", RW | RR, -EINVAL,
	  true },
	{ "every remote right", LW | RW | RR | RA, 0, true },
	{ "MW_BIND", MWB, 0, true },
	{ "ZERO_BASED", MRC_ACCESS_ZERO_BASED, 0, false },
	{ "HUGETLB", MRC_ACCESS_HUGETLB | RR, 0, false },
	{ "RELAXED_ORDERING", MRC_ACCESS_RELAXED_ORDERING | LW, 0, true },
	{ "every supported bit", MRC_ACCESS_SUPPORTED, 0, true },
	{ "ON_DEMAND", MRC_ACCESS_ON_DEMAND, -EOPNOTSUPP, false },
	{ "ON_DEMAND | LOCAL_WRITE", MRC_ACCESS_ON_DEMAND | LW, -EOPNOTSUPP,
	  true },
	{ "ON_DEMAND with REMOTE_WRITE alone", MRC_ACCESS_ON_DEMAND | RW,
	  -EINVAL, true },
	{ "unknown bit 8", BIT(8), -EINVAL, false },
	{ "unknown bit 19", BIT(19) | LW, -EINVAL, true },
	{ "unknown bit 21", BIT(21), -EINVAL, false },
	{ "unknown bit 31", BIT(31) | LW, -EINVAL, true },
	{ "all bits", U32_MAX, -EINVAL, true },
};

static void access_desc(const struct access_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(access, access_cases, access_desc);

static void mrc_check_access_table(struct kunit *test)
{
	const struct access_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, mrc_check_access(c->access), c->ret,
			    "access %#x", c->access);
}

static void mrc_access_writable_table(struct kunit *test)
{
	const struct access_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, mrc_access_writable(c->access), c->writable,
			    "access %#x", c->access);
}

/* The context bits are the ib_access_flags values (vhca relies on it). */
static void mrc_check_access_hw_mask(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, MRC_ACCESS_HW_MASK, 0x1fU);
	KUNIT_EXPECT_EQ(test, MRC_ACCESS_SUPPORTED & MRC_ACCESS_ON_DEMAND, 0U);
	KUNIT_EXPECT_EQ(test, MRC_ACCESS_WRITABLE & ~MRC_ACCESS_HW_MASK, 0U);
}

static struct kunit_case access_test_cases[] = {
	KUNIT_CASE_PARAM(mrc_check_access_table, access_gen_params),
	KUNIT_CASE_PARAM(mrc_access_writable_table, access_gen_params),
	KUNIT_CASE(mrc_check_access_hw_mask),
	{}
};

static struct kunit_suite access_test_suite = {
	.name = "mrcore_access",
	.test_cases = access_test_cases,
};

kunit_test_suite(access_test_suite);
