/* test_rangemeta.c - a wheel's METADATA read by ranges: the state machine
 * driven over wheels built here byte by byte, with the first read ending at
 * every byte, and hostile central directories whose offsets wrap past 2^64. */
#include "testutil.h"

#include <string.h>

#include "bytes.h"
#include "offwheel/error.h"
#include "rangemeta.h"

#define WHL "demo-1.0-py3-none-any.whl"
#define MEMBER "demo-1.0.dist-info/METADATA"

static const char metadata[] = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
                               "Summary: a wheel built by the test, long enough\n";

struct wheel {
	uint8_t b[4096];
	size_t len;
};

static uint32_t crc32_of(const void *data, size_t n)
{
	const uint8_t *p = data;
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
	}
	return ~c;
}

static void put(struct wheel *w, const void *p, size_t n)
{
	assert_true(w->len + n <= sizeof w->b);
	memcpy(w->b + w->len, p, n);
	w->len += n;
}

/* A local header and the stored data of one member; its offset. */
static uint64_t add_member(struct wheel *w, const char *name, const char *data, uint8_t *cd_out)
{
	uint8_t lh[30] = {0}, *cd = cd_out;
	size_t nl = strlen(name), dl = strlen(data);
	uint64_t off = w->len;
	ow_put_le32(lh, 0x04034b50u);
	ow_put_le16(lh + 4, 20);
	ow_put_le32(lh + 14, crc32_of(data, dl));
	ow_put_le32(lh + 18, (uint32_t)dl);
	ow_put_le32(lh + 22, (uint32_t)dl);
	ow_put_le16(lh + 26, (uint16_t)nl);
	put(w, lh, 30);
	put(w, name, nl);
	put(w, data, dl);
	memset(cd, 0, 46);
	ow_put_le32(cd, 0x02014b50u);
	ow_put_le16(cd + 4, 0x031e);
	memcpy(cd + 6, lh + 4, 26);
	ow_put_le32(cd + 38, 0100644u << 16);
	ow_put_le32(cd + 42, (uint32_t)off);
	return off;
}

/* A wheel of `pad` padding members and the METADATA last.  z64_off != 0:
 * the METADATA entry gives its local offset as 0xFFFFFFFF and this value in
 * a ZIP64 extra field (the real offset when z64_off == UINT64_MAX). */
static void build(struct wheel *w, int pad, uint64_t z64_off)
{
	uint8_t cds[8][46];
	char names[8][40];
	assert_true(pad < 8);
	w->len = 0;
	for (int i = 0; i < pad; i++) {
		snprintf(names[i], sizeof names[i], "demo/pad%d.py", i);
		add_member(w, names[i], "# padding, so that the tail ends inside it\n", cds[i]);
	}
	uint64_t moff = add_member(w, MEMBER, metadata, cds[pad]);
	uint64_t cd_off = w->len;
	for (int i = 0; i < pad; i++) {
		put(w, cds[i], 46);
		put(w, names[i], strlen(names[i]));
	}
	uint8_t ex[12] = {0};
	if (z64_off) {
		ow_put_le32(cds[pad] + 42, 0xFFFFFFFFu);
		ow_put_le16(cds[pad] + 30, sizeof ex);
		ow_put_le16(ex, 1);
		ow_put_le16(ex + 2, 8);
		uint64_t v = z64_off == UINT64_MAX ? moff : z64_off;
		ow_put_le32(ex + 4, (uint32_t)v);
		ow_put_le32(ex + 8, (uint32_t)(v >> 32));
	}
	put(w, cds[pad], 46);
	put(w, MEMBER, strlen(MEMBER));
	if (z64_off)
		put(w, ex, sizeof ex);
	uint8_t end[22] = {0};
	ow_put_le32(end, 0x06054b50u);
	ow_put_le16(end + 8, (uint16_t)(pad + 1));
	ow_put_le16(end + 10, (uint16_t)(pad + 1));
	ow_put_le32(end + 12, (uint32_t)(w->len - cd_off));
	ow_put_le32(end + 16, (uint32_t)cd_off);
	put(w, end, sizeof end);
}

/* Drive the reader over `w` as a server would answer, each read in a buffer
 * of exactly its size (so that ASan sees any byte read outside it). */
static int drive(const struct wheel *w, uint64_t tail, struct ow_rangemeta *rm)
{
	int rc = ow_rangemeta_init_tail(rm, WHL, w->len, tail);
	for (int reads = 0; rc == 0 && rm->stage != OW_RM_DONE; reads++) {
		assert_true(reads < 4);
		assert_true(rm->want_off <= w->len && rm->want_len <= w->len - rm->want_off);
		uint8_t *buf = malloc(rm->want_len ? rm->want_len : 1);
		assert_non_null(buf);
		memcpy(buf, w->b + rm->want_off, rm->want_len);
		rc = ow_rangemeta_feed(rm, buf, (size_t)rm->want_len);
		free(buf);
		if (rc == OW_RM_WANT_MORE)
			rc = 0;
	}
	return rc;
}

static void check_every_tail(int pad, uint64_t z64_off)
{
	struct wheel w;
	build(&w, pad, z64_off);
	for (uint64_t tail = 22; tail <= w.len + 1; tail++) {
		struct ow_rangemeta rm;
		int rc = drive(&w, tail, &rm);
		if (rc != 0)
			fail_msg("tail %llu of %zu: %s", (unsigned long long)tail, w.len,
			         ow_err_detail());
		assert_int_equal(rm.text_len, strlen(metadata));
		assert_string_equal(rm.text, metadata);
		ow_rangemeta_clear(&rm);
	}
}

static void test_every_tail_split(void **state)
{
	(void)state;
	check_every_tail(0, 0);
	check_every_tail(3, 0);
	check_every_tail(3, UINT64_MAX);
}

/* A ZIP64 local offset near 2^64: `local_off + header + size` wraps to a
 * small number, which once passed the bounds check and made the reader
 * take the member from 111 bytes before its buffer. */
static void test_zip64_offset_wraps(void **state)
{
	static const uint64_t offs[] = {UINT64_MAX - 110, UINT64_MAX - 29, UINT64_MAX - 1,
	                                UINT64_MAX - 200, (uint64_t)1 << 63};
	(void)state;
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
		for (int pad = 0; pad <= 3; pad += 3) {
			struct wheel w;
			build(&w, pad, offs[i]);
			struct ow_rangemeta rm;
			int rc = drive(&w, OW_RANGEMETA_TAIL, &rm);
			assert_int_equal(rc, OW_EZIP);
			if (!strstr(ow_err_detail(), "points past the member area"))
				fail_msg("offset %llu: %s", (unsigned long long)offs[i],
				         ow_err_detail());
			ow_rangemeta_clear(&rm);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_tail_split),
	    cmocka_unit_test(test_zip64_offset_wraps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
