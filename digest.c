#include "digest.h"

#include <openssl/evp.h>
#include <stdio.h>

static void to_hex(const unsigned char *md, char *out)
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int sha256_hex2(const void *a, size_t alen, const void *b, size_t blen,
		char out[SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
		 EVP_DigestUpdate(ctx, a, alen) && (!blen || EVP_DigestUpdate(ctx, b, blen)) &&
		 EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;

	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	to_hex(md, out);
	return 0;
}

int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	return sha256_hex2(data, len, NULL, 0, out);
}
