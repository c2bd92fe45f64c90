/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the JSON reader (json_read.h), fed the MCP server's untrusted messages.
 *
 * Parses the input; what parses is written back with the JSON writer (json.h) and must parse
 * again, and writing that second tree must give the same text byte for byte (the reader and
 * the writer agree). Trees the writer cannot hold (deeper than JSON_MAX_DEPTH, names with a
 * NUL) are only parsed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_json_read: check failed: %s (%s:%d)\n", #cond,       \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static bool writable(const struct jnode *n, int depth)
{
	if (n->key && strlen(n->key) != n->key_len)
		return false;
	if (n->type != JNODE_ARRAY && n->type != JNODE_OBJECT)
		return true;
	if (depth >= JSON_MAX_DEPTH - 1)
		return false;
	for (size_t i = 0; i < n->n; i++)
		if (!writable(&n->kids[i], depth + 1))
			return false;
	return true;
}

static void write_node(struct json *j, const struct jnode *n)
{
	if (n->key)
		json_key(j, n->key);
	switch (n->type) {
	case JNODE_NULL:
		json_null(j);
		break;
	case JNODE_BOOL:
		json_bool(j, n->b);
		break;
	case JNODE_NUMBER:
		json_raw(j, n->str);
		break;
	case JNODE_STRING:
		json_strn(j, n->str, n->len);
		break;
	case JNODE_ARRAY:
	case JNODE_OBJECT:
		n->type == JNODE_ARRAY ? json_arr_begin(j) : json_obj_begin(j);
		for (size_t i = 0; i < n->n; i++)
			write_node(j, &n->kids[i]);
		n->type == JNODE_ARRAY ? json_arr_end(j) : json_obj_end(j);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ab_err e = {0};
	struct jnode a, b;
	struct json ja, jb;

	if (json_read((const char *)data, size, &a, &e) < 0)
		return 0;
	if (!writable(&a, 0)) {
		jnode_free(&a);
		return 0;
	}
	json_init(&ja);
	write_node(&ja, &a);
	CHECK(json_text(&ja) != NULL);
	CHECK(json_read(json_text(&ja), strlen(json_text(&ja)), &b, &e) == 0);
	json_init(&jb);
	write_node(&jb, &b);
	CHECK(json_text(&jb) != NULL);
	CHECK(!strcmp(json_text(&ja), json_text(&jb)));
	json_free(&ja);
	json_free(&jb);
	jnode_free(&a);
	jnode_free(&b);
	return 0;
}
