/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "hostlimits.h"

#include <stdlib.h>
#include <string.h>

bool hostlimits_enabled(const struct hostlimits_conf *conf)
{
	return conf->max_connections || conf->rate || conf->max_bytes_out || conf->max_bytes_in;
}

/* Twice as many buckets as slots keeps the chains short without a resize. */
static size_t n_buckets(const struct hostlimits *t)
{
	return t->cap * 2;
}

int hostlimits_init(struct hostlimits *t, const struct hostlimits_conf *conf, size_t cap)
{
	memset(t, 0, sizeof(*t));
	t->conf = *conf;
	t->cap = cap ? cap : 1;
	t->entries = calloc(t->cap, sizeof(*t->entries));
	t->buckets = malloc(n_buckets(t) * sizeof(*t->buckets));
	if (!t->entries || !t->buckets) {
		hostlimits_free(t);
		return -1;
	}
	for (size_t i = 0; i < n_buckets(t); i++)
		t->buckets[i] = -1;
	return 0;
}

void hostlimits_free(struct hostlimits *t)
{
	free(t->entries);
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

/* FNV-1a: the names are short and chosen by the command, but a chain only costs time, and the
 * table's size bounds it. */
static size_t bucket_of(const struct hostlimits *t, const char *name)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		h = (h ^ *s) * 16777619u;
	return h % n_buckets(t);
}

static void refill(const struct hostlimits *t, struct host_entry *h, uint64_t now_ms)
{
	double rate = (double)t->conf.rate;

	if (!t->conf.rate)
		return;
	if (now_ms > h->refilled_ms)
		h->tokens += (double)(now_ms - h->refilled_ms) * rate / 1000.0;
	if (h->tokens > rate)
		h->tokens = rate;
	h->refilled_ms = now_ms;
}

/* An entry that remembers nothing a new one would not: it can be given to another host. */
static bool idle(const struct hostlimits *t, struct host_entry *h, uint64_t now_ms)
{
	refill(t, h, now_ms);
	return h->open == 0 && (!t->conf.rate || h->tokens >= (double)t->conf.rate) &&
	       (!t->conf.max_bytes_out || h->bytes_out == 0) &&
	       (!t->conf.max_bytes_in || h->bytes_in == 0);
}

static void unlink_entry(struct hostlimits *t, int i)
{
	int *link = &t->buckets[bucket_of(t, t->entries[i].name)];

	while (*link != i)
		link = &t->entries[*link].next;
	*link = t->entries[i].next;
	t->n--;
}

/* A free slot, or an idle one taken back; -1 when every slot holds state. Slots are only
 * freed to be reused at once, so the used ones are always the first n. */
static int free_slot(struct hostlimits *t, uint64_t now_ms)
{
	if (t->n < t->cap)
		return (int)t->n;
	for (size_t i = 0; i < t->cap; i++) {
		if (idle(t, &t->entries[i], now_ms)) {
			unlink_entry(t, (int)i);
			return (int)i;
		}
	}
	return -1;
}

static struct host_entry *find_or_add(struct hostlimits *t, const char *name, uint64_t now_ms)
{
	size_t b = bucket_of(t, name);
	struct host_entry *h;
	int i;

	for (i = t->buckets[b]; i >= 0; i = t->entries[i].next)
		if (!strcmp(t->entries[i].name, name))
			return &t->entries[i];
	if (strlen(name) >= sizeof(h->name) || (i = free_slot(t, now_ms)) < 0)
		return NULL;
	h = &t->entries[i];
	memset(h, 0, sizeof(*h));
	strcpy(h->name, name);
	h->tokens = (double)t->conf.rate;
	h->refilled_ms = now_ms;
	h->next = t->buckets[b];
	t->buckets[b] = i;
	t->n++;
	return h;
}

enum host_verdict hostlimits_check(struct hostlimits *t, const char *name, uint64_t now_ms,
				   struct host_entry **out)
{
	const struct hostlimits_conf *c = &t->conf;
	struct host_entry *h = find_or_add(t, name, now_ms);

	*out = h;
	if (!h)
		return HOST_TABLE_FULL;
	refill(t, h, now_ms);
	if (c->max_bytes_out && h->bytes_out >= c->max_bytes_out)
		return HOST_BYTES_OUT;
	if (c->max_bytes_in && h->bytes_in >= c->max_bytes_in)
		return HOST_BYTES_IN;
	if (c->max_connections && h->open >= c->max_connections)
		return HOST_CONNECTIONS;
	if (c->rate && h->tokens < 1.0)
		return HOST_RATE;
	return HOST_OK;
}

void hostlimits_take(struct hostlimits *t, struct host_entry *h)
{
	h->open++;
	if (t->conf.rate)
		h->tokens -= 1.0;
}

void hostlimits_release(struct host_entry *h)
{
	if (h->open)
		h->open--;
}

bool hostlimits_count(struct hostlimits *t, struct host_entry *h, bool outbound, uint64_t n)
{
	uint64_t max = outbound ? t->conf.max_bytes_out : t->conf.max_bytes_in;
	uint64_t *total = outbound ? &h->bytes_out : &h->bytes_in;

	*total += n;
	return !max || *total <= max;
}

const char *host_verdict_key(enum host_verdict v)
{
	switch (v) {
	case HOST_CONNECTIONS:
		return "max-connections-per-host";
	case HOST_RATE:
		return "rate-per-host";
	case HOST_BYTES_OUT:
		return "max-bytes-out-per-host";
	case HOST_BYTES_IN:
		return "max-bytes-in-per-host";
	case HOST_TABLE_FULL:
		return "per-host table";
	case HOST_OK:
		break;
	}
	return NULL;
}
