/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* SHA-256 (Nettle), as lowercase hex. */
#ifndef AGENTBOX_DIGEST_H
#define AGENTBOX_DIGEST_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* out receives 2 * n lowercase hex digits and a NUL. */
void hex_encode(const unsigned char *in, size_t n, char *out);

/* out receives 64 hex digits and a NUL. Returns 0, or -1 if libcrypto failed. */
int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);
/* The digest of a's bytes followed by b's. */
int sha256_hex2(const void *a, size_t alen, const void *b, size_t blen,
		char out[SHA256_HEX_LEN + 1]);

#endif
