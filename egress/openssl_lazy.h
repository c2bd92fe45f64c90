/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The table tools/defer_relocs.c fills in after the agentbox link and egress/openssl_lazy.c reads:
 * where the relocations of OpenSSL's data that glibc no longer applies at start-up are, and which
 * pages become read-only once they are applied (see tools/openssl_lazy.ld). Offsets are from the
 * load address (the ELF header, vaddr 0 in a static PIE). A binary the tool has not processed
 * keeps count 0: nothing is deferred and nothing is done. */
#ifndef AGENTBOX_OPENSSL_LAZY_H
#define AGENTBOX_OPENSSL_LAZY_H

#include <stdint.h>

#define OPENSSL_LAZY_SECTION ".openssl_lazy"
#define OPENSSL_LAZY_MAGIC "agentbox-lazy-1"

struct openssl_lazy_table {
	char magic[16];	   /* OPENSSL_LAZY_MAGIC, NUL-padded */
	uint64_t rela;	   /* the first deferred Elf64_Rela */
	uint64_t count;	   /* how many (all R_X86_64_RELATIVE) */
	uint64_t ro_start; /* [ro_start, ro_end): made read-only once applied */
	uint64_t ro_end;
};

/* Applies the deferred relocations now, if OpenSSL has not been initialised yet (idempotent,
 * thread-safe). Defined in the agentbox binary only (egress/openssl_lazy.c); tls_ca.c refers to
 * it weakly, as NULL elsewhere, where glibc relocated everything at start-up. */
void openssl_lazy_relocate(void);

#endif
