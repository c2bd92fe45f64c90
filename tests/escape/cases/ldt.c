/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* ldt: write one 32-bit data segment descriptor into this process's LDT (modify_ldt func 1),
 * then read the LDT back (func 0). SUCCESS when the entry is there. */
#include "escape.h"

#include <asm/ldt.h>
#include <sys/syscall.h>

int main(void)
{
	struct user_desc d = {.entry_number = 0,
			      .base_addr = 0,
			      .limit = 0xfffff,
			      .seg_32bit = 1,
			      .contents = 0,
			      .read_exec_only = 0,
			      .limit_in_pages = 1,
			      .seg_not_present = 0,
			      .useable = 1};
	unsigned char back[LDT_ENTRY_SIZE];
	long n;

	info("about to write an LDT entry");
	if (syscall(SYS_modify_ldt, 1, &d, sizeof(d)) < 0)
		failed(errno, "modify_ldt write");
	n = syscall(SYS_modify_ldt, 0, back, sizeof(back));
	if (n < 0)
		failed(errno, "modify_ldt read");
	if (n < (long)sizeof(back))
		failed(0, "modify_ldt read returned %ld bytes", n);
	success("an LDT entry was written and read back (%ld bytes)", n);
}
