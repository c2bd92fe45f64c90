/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Per-host egress limits ([network] *-per-host): open connections, new connections per second,
 * and bytes each way, counted per requested host name in a table of bounded size. Pure: the
 * caller passes the time, so the decisions are unit-testable. */
#ifndef AGENTBOX_HOSTLIMITS_H
#define AGENTBOX_HOSTLIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hosts tracked at once. A command can name any number of hosts a wildcard rule allows, so the
 * table cannot grow with them; when every slot holds state, a new host is refused. */
#define HOSTLIMITS_MAX_HOSTS 4096

struct hostlimits_conf {
	uint64_t max_connections, rate, max_bytes_out, max_bytes_in; /* 0: no limit */
};

struct host_entry {
	char name[256];
	uint64_t open; /* admitted connections not yet released */
	double tokens; /* rate: a token bucket of `rate` tokens */
	uint64_t refilled_ms;
	uint64_t bytes_out, bytes_in;
	bool out_hit, in_hit; /* the byte budget was passed (audited once) */
	int next;	      /* the next entry in this hash bucket, or -1 */
};

struct hostlimits {
	struct hostlimits_conf conf;
	struct host_entry *entries;
	int *buckets;
	size_t cap, n;
};

enum host_verdict {
	HOST_OK,
	HOST_CONNECTIONS, /* max-connections-per-host open already */
	HOST_RATE,	  /* rate-per-host: no token left */
	HOST_BYTES_OUT,	  /* the host's max-bytes-out-per-host is spent */
	HOST_BYTES_IN,
	HOST_TABLE_FULL, /* a new host, and every slot holds state */
};

/* True when the configuration sets any per-host limit (otherwise no table is needed). */
bool hostlimits_enabled(const struct hostlimits_conf *conf);
/* cap slots (at least 1). Returns -1 when out of memory. */
int hostlimits_init(struct hostlimits *t, const struct hostlimits_conf *conf, size_t cap);
void hostlimits_free(struct hostlimits *t);

/* May a new connection to name (already in the form the rules compare) go on at now_ms?
 * Finds or makes name's entry (*h, NULL on HOST_TABLE_FULL) but takes nothing from it. */
enum host_verdict hostlimits_check(struct hostlimits *t, const char *name, uint64_t now_ms,
				   struct host_entry **h);
/* The connection was admitted: it holds one of the host's connections and took one token. */
void hostlimits_take(struct hostlimits *t, struct host_entry *h);
/* The connection closed. */
void hostlimits_release(struct host_entry *h);
/* Counts n relayed bytes. Returns false when they take the host past its budget that way. */
bool hostlimits_count(struct hostlimits *t, struct host_entry *h, bool outbound, uint64_t n);

/* The limit's name in the audit trail and in refusals, e.g. "max-connections-per-host". */
const char *host_verdict_key(enum host_verdict v);

#endif
