/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* SHA-256 from Nettle: direct functions, no run-time initialisation (OpenSSL 3's provider
 * fetch cost more than the rest of agentbox's start-up together). */
#include "digest.h"

#include <nettle/sha2.h>

/* A table, not snprintf: every audit event hashes twice, and 32 snprintf calls per digest
 * were a quarter of the instructions of a run. */
void hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int sha256_hex2(const void *a, size_t alen, const void *b, size_t blen,
		char out[SHA256_HEX_LEN + 1])
{
	struct sha256_ctx ctx;
	unsigned char md[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, alen, a);
	if (blen)
		sha256_update(&ctx, blen, b);
	sha256_digest(&ctx, sizeof(md), md);
	hex_encode(md, sizeof(md), out);
	return 0;
}

int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	return sha256_hex2(data, len, NULL, 0, out);
}
