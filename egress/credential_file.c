/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Token files with the placeholder in them, made inside by pid 1 (credential_file.h). */
#include "credential_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_dir.h"

/* What the file holds: its text with the placeholder for each {} */
static size_t rendered_size(const char *text, size_t ph_len)
{
	size_t n = 0;

	for (const char *t = text; *t; t++, n++)
		if (t[0] == '{' && t[1] == '}') {
			n += ph_len - 1;
			t++;
		}
	return n;
}

size_t creds_files_size(const struct policy *p)
{
	size_t n = 0;

	/* a page for each file's inode and rounding; the placeholder is at most 128 bytes */
	for (size_t i = 0; i < p->n_creds; i++)
		if (p->creds[i].file)
			n += rendered_size(p->creds[i].file, 128) + 4096;
	return n;
}

static int write_text(int fd, const char *text, const char *ph, size_t ph_len)
{
	size_t len = rendered_size(text, ph_len), k = 0, done = 0;
	char *buf = malloc(len + 1);

	if (!buf)
		return errno = ENOMEM, -1;
	for (const char *t = text; *t; t++) {
		if (t[0] == '{' && t[1] == '}') {
			memcpy(buf + k, ph, ph_len);
			k += ph_len;
			t++;
		} else {
			buf[k++] = *t;
		}
	}
	while (done < len) {
		ssize_t w = write(fd, buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int err = w < 0 ? errno : EIO;
			free(buf);
			return errno = err, -1;
		}
		done += (size_t)w;
	}
	free(buf);
	return 0;
}

int creds_write_files(const struct creds *cs, int dir, struct ab_err *e)
{
	for (size_t i = 0; cs && i < cs->n; i++) {
		const struct cred *c = &cs->v[i];
		char name[64];
		int fd;

		if (!c->pc->file)
			continue;
		snprintf(name, sizeof(name), CRED_FILE_PREFIX "%s", c->pc->name);
		fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);
		if (fd >= 0 && write_text(fd, c->pc->file, c->ph, c->ph_len) < 0) {
			int err = errno;
			close(fd);
			errno = err;
			fd = -1;
		}
		if (fd < 0 || close(fd) < 0)
			return ab_fail(e, errno, "%s/%s", AGENTBOX_RUN_DIR, name),
			       ab_context(e, "credential %s's file", c->pc->name);
	}
	return 0;
}
