/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* defer_relocs [--check] BINARY: after the link of the static PIE agentbox, take the relative
 * relocations of OpenSSL's data, nghttp2's and libunistring's (the sections tools/openssl_lazy.ld
 * makes, .data.openssl_ro and .data.openssl_rw) out of the part of .rela.dyn that glibc applies at
 * start-up, and record where they now are in the binary's openssl_lazy_table
 * (egress/openssl_lazy.h), for egress/openssl_lazy.c to apply at their first use (it wraps the
 * entry points that come first).
 *
 * The entries of DT_RELA are reordered in place: the relative relocations glibc still applies,
 * then any other relocation (glibc applies them too), then the deferred ones. DT_RELACOUNT and
 * DT_RELASZ are lowered so that glibc's loop stops before the deferred ones; the file keeps them
 * all. Nothing is added or moved, so no address in the binary changes. A binary processed once
 * is left as it is. Exits non-zero, leaving the file untouched, on anything it does not expect:
 * then the build fails rather than ship a binary whose OpenSSL would run unrelocated. --check only
 * says whether the binary has been processed (exit 0) or not (exit 1), and writes nothing. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "openssl_lazy.h"

static const char *path;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "defer_relocs: %s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static unsigned char *file;
static size_t file_size;

/* a pointer to SIZE bytes at file offset OFF, all inside the file */
static void *at(uint64_t off, uint64_t size)
{
	if (off > file_size || size > file_size - off)
		die("offset %#llx (+%#llx) is past the end of the file", (unsigned long long)off,
		    (unsigned long long)size);
	return file + off;
}

/* the file offset of SIZE bytes at virtual address VADDR, from the PT_LOAD that holds them */
static uint64_t vaddr_offset(const Elf64_Ehdr *eh, uint64_t vaddr, uint64_t size)
{
	const Elf64_Phdr *ph = at(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(*ph));

	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr + size <= ph[i].p_vaddr + ph[i].p_filesz)
			return vaddr - ph[i].p_vaddr + ph[i].p_offset;
	die("address %#llx is in no loaded part of the file", (unsigned long long)vaddr);
	return 0;
}

static const Elf64_Shdr *section(const Elf64_Ehdr *eh, const char *name)
{
	const Elf64_Shdr *sh = at(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(*sh));
	const Elf64_Shdr *strtab;
	const char *names;

	if (eh->e_shstrndx >= eh->e_shnum)
		die("no section names");
	strtab = &sh[eh->e_shstrndx];
	names = at(strtab->sh_offset, strtab->sh_size);
	for (int i = 0; i < eh->e_shnum; i++) {
		size_t room = sh[i].sh_name < strtab->sh_size ? strtab->sh_size - sh[i].sh_name : 0;

		if (room && strnlen(names + sh[i].sh_name, room) < room &&
		    !strcmp(names + sh[i].sh_name, name))
			return &sh[i];
	}
	return NULL;
}

static Elf64_Dyn *dyn_entry(Elf64_Dyn *dyn, size_t n, Elf64_Sxword tag)
{
	for (size_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == tag)
			return &dyn[i];
	return NULL;
}

static void load(void)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		die("%s", strerror(errno));
	file_size = (size_t)st.st_size;
	if (!(file = malloc(file_size ? file_size : 1)))
		die("out of memory");
	for (size_t got = 0; got < file_size;) {
		ssize_t n = read(fd, file + got, file_size - got);
		if (n <= 0)
			die("cannot read it: %s", n < 0 ? strerror(errno) : "short file");
		got += (size_t)n;
	}
	close(fd);
}

/* the whole file, written to a temporary beside it and renamed over it */
static void store(void)
{
	size_t len = strlen(path) + sizeof(".defer");
	char *tmp = malloc(len);
	struct stat st;
	int fd;

	if (!tmp || stat(path, &st) < 0)
		die("%s", tmp ? strerror(errno) : "out of memory");
	snprintf(tmp, len, "%s.defer", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777)) < 0)
		die("%s: %s", tmp, strerror(errno));
	for (size_t put = 0; put < file_size;) {
		ssize_t n = write(fd, file + put, file_size - put);
		if (n <= 0)
			die("%s: %s", tmp, strerror(errno));
		put += (size_t)n;
	}
	if (fchmod(fd, st.st_mode & 07777) < 0 || close(fd) < 0 || rename(tmp, path) < 0)
		die("%s: %s", tmp, strerror(errno));
	free(tmp);
}

int main(int argc, char **argv)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const Elf64_Shdr *ro, *rw, *tab_sh;
	struct openssl_lazy_table *tab;
	Elf64_Dyn *dyn = NULL, *d_rela, *d_relasz, *d_relacount, *d_relaent;
	size_t ndyn = 0, n, nrel, kept = 0, others = 0, deferred = 0;
	uint64_t lo, hi;
	Elf64_Rela *rela, *sorted;

	bool check = argc == 3 && !strcmp(argv[1], "--check");

	if (argc != 2 + check) {
		fprintf(stderr, "usage: defer_relocs [--check] BINARY\n");
		return 2;
	}
	path = argv[1 + check];
	load();
	eh = at(0, sizeof(*eh));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64)
		die("not an x86-64 ELF file");
	if (eh->e_type != ET_DYN)
		die("not a PIE: nothing is relocated at start-up");
	ph = at(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(*ph));
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP)
			die("has a dynamic loader: only a static PIE is handled");
		if (ph[i].p_type == PT_DYNAMIC) {
			dyn = at(ph[i].p_offset, ph[i].p_filesz);
			ndyn = ph[i].p_filesz / sizeof(*dyn);
		}
	}
	if (!dyn)
		die("no dynamic section");

	if (!(tab_sh = section(eh, OPENSSL_LAZY_SECTION)) || tab_sh->sh_size < sizeof(*tab))
		die("no %s section (egress/openssl_lazy.c not linked in)", OPENSSL_LAZY_SECTION);
	tab = at(tab_sh->sh_offset, sizeof(*tab));
	if (memcmp(tab->magic, OPENSSL_LAZY_MAGIC, sizeof(OPENSSL_LAZY_MAGIC)))
		die("%s does not hold the table it should", OPENSSL_LAZY_SECTION);
	if (tab->count) {
		printf("defer_relocs: %s: already done (%llu relocations deferred)\n", path,
		       (unsigned long long)tab->count);
		return 0;
	}
	if (check)
		die("OpenSSL's relocations are not deferred (defer_relocs has not run on it)");
	if (!(ro = section(eh, ".data.openssl_ro")) || !(rw = section(eh, ".data.openssl_rw")))
		die("no .data.openssl_ro or .data.openssl_rw section (tools/openssl_lazy.ld not "
		    "used)");
	lo = ro->sh_addr;
	hi = rw->sh_addr + rw->sh_size;
	if (rw->sh_addr < ro->sh_addr + ro->sh_size)
		die("the two OpenSSL sections are out of order");

	d_rela = dyn_entry(dyn, ndyn, DT_RELA);
	d_relasz = dyn_entry(dyn, ndyn, DT_RELASZ);
	d_relacount = dyn_entry(dyn, ndyn, DT_RELACOUNT);
	d_relaent = dyn_entry(dyn, ndyn, DT_RELAENT);
	if (!d_rela || !d_relasz || !d_relacount ||
	    (d_relaent && d_relaent->d_un.d_val != sizeof(*rela)))
		die("no DT_RELA, DT_RELASZ and DT_RELACOUNT, or entries of an unexpected size");
	n = d_relasz->d_un.d_val / sizeof(*rela);
	nrel = d_relacount->d_un.d_val;
	if (nrel > n)
		die("DT_RELACOUNT is larger than DT_RELASZ");
	rela = at(vaddr_offset(eh, d_rela->d_un.d_ptr, n * sizeof(*rela)), n * sizeof(*rela));
	if (!(sorted = malloc(n * sizeof(*rela) + 1)))
		die("out of memory");

	/* glibc applies the first DT_RELACOUNT entries as relative ones without looking at their
	 * type: check that they are, and that nothing else writes into the deferred range */
	for (size_t i = 0; i < n; i++) {
		bool relative = ELF64_R_TYPE(rela[i].r_info) == R_X86_64_RELATIVE;
		bool inside = rela[i].r_offset >= lo && rela[i].r_offset < hi;

		if (i < nrel && !relative)
			die("entry %zu of the DT_RELACOUNT ones is not relative", i);
		if (inside && !relative)
			die("a relocation of type %llu into OpenSSL's data: cannot defer it",
			    (unsigned long long)ELF64_R_TYPE(rela[i].r_info));
		if (i < nrel && !inside)
			sorted[kept++] = rela[i];
	}
	for (size_t i = nrel; i < n; i++)
		if (!(rela[i].r_offset >= lo && rela[i].r_offset < hi))
			sorted[kept + others++] = rela[i];
	for (size_t i = 0; i < n; i++)
		if (rela[i].r_offset >= lo && rela[i].r_offset < hi)
			sorted[kept + others + deferred++] = rela[i];
	if (!deferred)
		die("no relocation into OpenSSL's data: the linker script had no effect");

	memcpy(rela, sorted, n * sizeof(*rela));
	d_relacount->d_un.d_val = kept;
	d_relasz->d_un.d_val = (kept + others) * sizeof(*rela);
	tab->rela = d_rela->d_un.d_ptr + (kept + others) * sizeof(*rela);
	tab->count = deferred;
	tab->ro_start = ro->sh_addr;
	tab->ro_end = ro->sh_addr + ro->sh_size;
	store();
	printf("defer_relocs: %s: %zu of %zu relative relocations deferred to their first use "
	       "(%llu KiB of data)\n",
	       path, deferred, nrel, (unsigned long long)((hi - lo) / 1024));
	return 0;
}
