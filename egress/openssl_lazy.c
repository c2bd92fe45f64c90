/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* OpenSSL's data relocated at its first use, not at every start.
 *
 * In the static PIE, OpenSSL's pointer tables need about 18,500 relative relocations over some
 * 100 pages: applied by glibc before main, they cost every start of agentbox 100 copy-on-write
 * page faults (0.55 ms on a Firecracker guest, more than the whole start of a static
 * hello-world), whether or not the run does TLS. tools/openssl_lazy.ld gathers that data into
 * sections of its own, tools/defer_relocs.c takes their relocations out of glibc's list after
 * the link and records them in openssl_lazy_table, and this file applies them when the process
 * first initialises OpenSSL.
 *
 * Every use of OpenSSL in agentbox begins with OPENSSL_init_crypto (tls_ca_openssl_init) or
 * OPENSSL_init_ssl (intercept.c's contexts): the link wraps both (-Wl,--wrap), so the relocations
 * are applied before OpenSSL's first real work. A new use must keep to that. Until then OpenSSL's
 * tables hold offsets from the load address, not addresses: a use that slipped past would
 * follow them into the first, unmapped megabytes of the address space and fault. OpenSSL's CPU
 * probe, which libcrypto runs from .init at every start (CPUID traps to the hypervisor in a VM:
 * 0.09 ms there), is wrapped too and runs here, before OpenSSL's initialisation calls it again (a
 * no-op the second time).
 *
 * The data of two libraries that a run without TLS does not use is deferred with OpenSSL's
 * (tools/openssl_lazy.ld), and their entry points wrapped likewise: nghttp2's, read once an
 * intercepted connection speaks HTTP/2 (its sessions come from the two wrapped constructors),
 * and libunistring's, read by libidn2 for a host name not in ASCII (idn2_to_ascii_8z, whose only
 * caller is policy/egress_rule.c's idn_ascii). The first such name relocates OpenSSL's data too,
 * whether it comes from the profile, a harness's grant or the sandboxed command's request to the
 * proxy (then after the clone, at the cost the next paragraph gives): one group is one table to
 * apply, and such names are rare; once a run, at most.
 *
 * A run that will intercept relocates earlier, before the clone (openssl_lazy_relocate, from
 * trust_prepare): after it, each page's copy-on-write fault (pid 1 shares the page) in a process
 * of three threads, which must drop the page from each other's TLBs, cost the CA's thread 1.7 ms
 * of CPU on a Firecracker guest; in the single-threaded process before the clone, a fraction.
 *
 * OpenSSL's error strings (4,400 entries hashed into a table, ~0.3 ms of a run's start on a
 * Firecracker guest) are loaded when a thread first queues or reads an error, which the CA's
 * first random bytes do: the wrapper drops that request, and the strings are loaded when
 * agentbox first renders a reason (tls_error_reason asks for OpenSSL's and libssl's strings
 * together, the one request let through). Linked into the agentbox binary only, with those
 * options. */
#include <elf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <idn2.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>

#include "openssl_lazy.h"

/* Filled in after the link, so read through a volatile pointer (its value must not be folded in
 * at compile time); not volatile itself, which would put it in a writable section, where a write
 * could aim apply()'s writes. */
__attribute__((section(OPENSSL_LAZY_SECTION), used, aligned(8)))
const struct openssl_lazy_table openssl_lazy_table = {.magic = OPENSSL_LAZY_MAGIC};

extern const char __ehdr_start[]; /* the load address: the ELF header is at vaddr 0 */

int __real_OPENSSL_init_crypto(uint64_t opts, const void *settings);
int __real_OPENSSL_init_ssl(uint64_t opts, const void *settings);
void __real_OPENSSL_cpuid_setup(void);
int __wrap_OPENSSL_init_crypto(uint64_t opts, const void *settings);
int __wrap_OPENSSL_init_ssl(uint64_t opts, const void *settings);
void __wrap_OPENSSL_cpuid_setup(void);
int __real_nghttp2_session_server_new3(nghttp2_session **s, const nghttp2_session_callbacks *cb,
				       void *user, const nghttp2_option *opt, nghttp2_mem *mem);
int __real_nghttp2_session_client_new3(nghttp2_session **s, const nghttp2_session_callbacks *cb,
				       void *user, const nghttp2_option *opt, nghttp2_mem *mem);
int __real_idn2_to_ascii_8z(const char *in, char **out, int flags);
int __wrap_nghttp2_session_server_new3(nghttp2_session **s, const nghttp2_session_callbacks *cb,
				       void *user, const nghttp2_option *opt, nghttp2_mem *mem);
int __wrap_nghttp2_session_client_new3(nghttp2_session **s, const nghttp2_session_callbacks *cb,
				       void *user, const nghttp2_option *opt, nghttp2_mem *mem);
int __wrap_idn2_to_ascii_8z(const char *in, char **out, int flags);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static volatile bool ready;

static void apply(void)
{
	const volatile struct openssl_lazy_table *t = &openssl_lazy_table;
	uintptr_t base = (uintptr_t)__ehdr_start;
	const Elf64_Rela *r = (const Elf64_Rela *)(base + t->rela);
	uint64_t n = t->count;
	uintptr_t ro = base + t->ro_start, ro_end = base + t->ro_end;
	long page = sysconf(_SC_PAGESIZE);

	for (uint64_t i = 0; i < n; i++)
		*(uint64_t *)(base + r[i].r_offset) = base + (uint64_t)r[i].r_addend;
	/* read-only again, as PT_GNU_RELRO would have left it (the section is page-aligned); if
	 * the kernel refuses (ENOMEM only), they stay writable, as in a link with -z norelro */
	if (n && ro_end > ro && page > 0 && (ro | ro_end) % (uintptr_t)page == 0)
		(void)mprotect((void *)ro, ro_end - ro, PROT_READ);
	ready = true;
	__real_OPENSSL_cpuid_setup();
}

void openssl_lazy_relocate(void)
{
	pthread_once(&once, apply);
}

int __wrap_OPENSSL_init_crypto(uint64_t opts, const void *settings)
{
	pthread_once(&once, apply);
	if (!(opts & OPENSSL_INIT_LOAD_SSL_STRINGS))
		opts &= ~(uint64_t)OPENSSL_INIT_LOAD_CRYPTO_STRINGS;
	return __real_OPENSSL_init_crypto(opts, settings);
}

int __wrap_OPENSSL_init_ssl(uint64_t opts, const void *settings)
{
	pthread_once(&once, apply);
	return __real_OPENSSL_init_ssl(opts, settings);
}

/* .init's call (at every start) does nothing; OpenSSL's own initialisation, after apply, probes */
void __wrap_OPENSSL_cpuid_setup(void)
{
	if (ready)
		__real_OPENSSL_cpuid_setup();
}

int __wrap_nghttp2_session_server_new3(nghttp2_session **s, const nghttp2_session_callbacks *cb,
				       void *user, const nghttp2_option *opt, nghttp2_mem *mem)
{
	pthread_once(&once, apply);
	return __real_nghttp2_session_server_new3(s, cb, user, opt, mem);
}

int __wrap_nghttp2_session_client_new3(nghttp2_session **s, const nghttp2_session_callbacks *cb,
				       void *user, const nghttp2_option *opt, nghttp2_mem *mem)
{
	pthread_once(&once, apply);
	return __real_nghttp2_session_client_new3(s, cb, user, opt, mem);
}

int __wrap_idn2_to_ascii_8z(const char *in, char **out, int flags)
{
	pthread_once(&once, apply);
	return __real_idn2_to_ascii_8z(in, out, flags);
}
