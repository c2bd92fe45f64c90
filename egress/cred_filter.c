/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The first pass of the response scrub (include/cred_filter.h): where in a body a form of a
 * real value may start. Most of a body is no such place, and the scrub is on the path of every
 * byte a bound host sends, so this pass must run near memory speed: 16 bytes at a time with
 * SSSE3's byte shuffles where the processor has them (each byte's two nibbles looked up in
 * tables of "a form may start with this byte here", for the byte and the one after it), and
 * the exact table of byte pairs, one pair at a time, for the rest. AVX2 does 32 at a time. */
#include "cred_filter.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CRED_FILTER_SIMD 1
/* glibc's view of the processor, probed once at its start anyway: GCC's __builtin_cpu_supports
 * links libgcc's constructor, which probes it again at every start of agentbox (CPUID traps to
 * the hypervisor in a VM: about 0.08 ms of a Firecracker guest's start) */
#if defined(__has_include) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define HAS_AVX2() CPU_FEATURE_ACTIVE(AVX2)
#define HAS_SSSE3() CPU_FEATURE_ACTIVE(SSSE3)
#else
#define HAS_AVX2() __builtin_cpu_supports("avx2")
#define HAS_SSSE3() __builtin_cpu_supports("ssse3")
#endif
#endif

/* Pair a, b may start a form; the shuffle tables hold it in bucket (a bit of their bytes). */
static void pair_set(struct cred_filter *f, unsigned bucket, unsigned char a, unsigned char b)
{
	unsigned k = (unsigned)a << 8 | b;
	uint8_t bit = (uint8_t)(1u << bucket);

	f->pair[k >> 3] |= (uint8_t)(1u << (k & 7));
	f->lo[0][a & 15] |= bit;
	f->hi[0][a >> 4] |= bit;
	f->lo[1][b & 15] |= bit;
	f->hi[1][b >> 4] |= bit;
}

static size_t variants(unsigned char c, bool fold, unsigned char out[2])
{
	out[0] = c;
	if (fold && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
		out[1] = (unsigned char)(c ^ 32);
		return 2;
	}
	return 1;
}

void cred_filter_add(struct cred_filter *f, const char *find, bool fold, bool wraps)
{
	static const char hex[] = "0123456789abcdefABCDEF";
	unsigned char first[2], second[2];
	size_t n1 = variants((unsigned char)find[0], fold, first);
	size_t n2 = variants((unsigned char)find[1], fold, second);

	/* forms share buckets 0-6, the fewer the fewer false hits; bucket 7 is a first byte
	 * written %XX or %25XX: a '%' and a hex digit (or the value's own '%' and its next byte) */
	f->byte['%'] = true;
	for (size_t i = 0; i < n1; i++) {
		f->byte[first[i]] = true;
		pair_set(f, f->bucket, first[i], '%');
		if (wraps) { /* a line break after the first character */
			pair_set(f, f->bucket, first[i], '\r');
			pair_set(f, f->bucket, first[i], '\n');
		}
		for (size_t j = 0; j < n2; j++)
			pair_set(f, f->bucket, first[i], second[j]);
	}
	/* JSON's \/ for a '/' */
	if (find[0] == '/') {
		f->byte['\\'] = true;
		pair_set(f, f->bucket, '\\', '/');
	}
	for (size_t i = 0; i < n1 && find[1] == '/'; i++)
		pair_set(f, f->bucket, first[i], '\\');
	f->bucket = (f->bucket + 1) % 7;
	for (size_t j = 0; j < n2; j++)
		pair_set(f, 7, '%', second[j]);
	for (const char *h = hex; *h; h++)
		pair_set(f, 7, '%', (unsigned char)*h);
}

void cred_filter_merge(struct cred_filter *into, const struct cred_filter *from)
{
	for (size_t k = 0; k < sizeof(into->pair); k++)
		into->pair[k] |= from->pair[k];
	for (size_t k = 0; k < 256; k++)
		into->byte[k] |= from->byte[k];
	for (size_t s = 0; s < 2; s++)
		for (size_t k = 0; k < 16; k++) {
			into->lo[s][k] |= from->lo[s][k];
			into->hi[s][k] |= from->hi[s][k];
		}
}

static bool pair_at(const struct cred_filter *f, const unsigned char *b, size_t i)
{
	unsigned k = (unsigned)b[i] << 8 | b[i + 1];

	return f->pair[k >> 3] >> (k & 7) & 1;
}

#ifdef CRED_FILTER_SIMD
/* The first of the block's positions *i + (a set bit of hits) where an exact pair starts: *i
 * moved there. */
static bool exact_hit(const struct cred_filter *f, const unsigned char *b, uint32_t hits, size_t *i)
{
	for (; hits; hits &= hits - 1) {
		size_t at = *i + (size_t)__builtin_ctz(hits);
		if (pair_at(f, b, at)) {
			*i = at;
			return true;
		}
	}
	return false;
}

/* For each of 16 bytes, the buckets whose patterns may have it at position s. */
__attribute__((target("ssse3"))) static __m128i buckets(const struct cred_filter *f, size_t s,
							__m128i v)
{
	const __m128i low = _mm_set1_epi8(0x0f);
	__m128i lo =
	    _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)f->lo[s]), _mm_and_si128(v, low));
	__m128i hi = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)f->hi[s]),
				      _mm_and_si128(_mm_srli_epi16(v, 4), low));

	return _mm_and_si128(lo, hi);
}

/* From i, 16 bytes at a time while the next 17 are there: the first exact pair, or where the
 * blocks ran out (*i; the caller goes on one pair at a time). */
__attribute__((target("ssse3"))) static bool next_block(const struct cred_filter *f,
							const unsigned char *b, size_t *i, size_t n)
{
	const __m128i zero = _mm_setzero_si128();

	for (; *i + 17 <= n; *i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(b + *i));
		__m128i w = _mm_loadu_si128((const __m128i *)(b + *i + 1));
		__m128i m = _mm_and_si128(buckets(f, 0, v), buckets(f, 1, w));
		unsigned hits = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(m, zero)) & 0xffff;
		if (hits && exact_hit(f, b, hits, i))
			return true;
	}
	return false;
}

__attribute__((target("avx2"))) static __m256i buckets32(const struct cred_filter *f, size_t s,
							 __m256i v)
{
	const __m256i low = _mm256_set1_epi8(0x0f);
	__m256i lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)f->lo[s]));
	__m256i hi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)f->hi[s]));

	lo = _mm256_shuffle_epi8(lo, _mm256_and_si256(v, low));
	hi = _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
	return _mm256_and_si256(lo, hi);
}

__attribute__((target("avx2"))) static bool
next_block32(const struct cred_filter *f, const unsigned char *b, size_t *i, size_t n)
{
	const __m256i zero = _mm256_setzero_si256();

	for (; *i + 33 <= n; *i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(b + *i));
		__m256i w = _mm256_loadu_si256((const __m256i *)(b + *i + 1));
		__m256i m = _mm256_and_si256(buckets32(f, 0, v), buckets32(f, 1, w));
		uint32_t hits = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero));
		if (hits && exact_hit(f, b, hits, i))
			return true;
	}
	return false;
}

/* 2: AVX2, 1: SSSE3, 0: neither (asked once) */
static int simd_level(void)
{
	static int known = -1;

	if (known < 0)
		known = HAS_AVX2() ? 2 : HAS_SSSE3() ? 1 : 0;
	return known;
}
#endif

size_t cred_filter_next(const struct cred_filter *f, const unsigned char *b, size_t from, size_t n)
{
	size_t i = from;

#ifdef CRED_FILTER_SIMD
	int level = simd_level();
	if (level == 2 && next_block32(f, b, &i, n))
		return i;
	if (level >= 1 && next_block(f, b, &i, n))
		return i;
#endif
	for (; i + 1 < n; i++)
		if (pair_at(f, b, i))
			return i;
	return i < n && f->byte[b[i]] ? i : n;
}
