/* SHA-256 from Nettle: direct functions, no run-time initialisation (OpenSSL 3's provider
 * fetch cost more than the rest of agentbox's start-up together). */
#include "digest.h"

#include <nettle/sha2.h>
#include <stdio.h>

static void to_hex(const unsigned char *md, char *out)
{
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
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
	to_hex(md, out);
	return 0;
}

int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	return sha256_hex2(data, len, NULL, 0, out);
}
