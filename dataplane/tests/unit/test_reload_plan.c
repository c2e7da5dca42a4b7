/* SPDX-License-Identifier: MIT */
/*
 * director/reload_plan.c: for each kind of change to tide-director's configuration file, what a
 * SIGHUP applies, defers to the next load_table, or refuses until a restart. The configurations
 * are read by config_load from JSON text, as the director reads its file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "reload_plan.h"
#include "service_tests.h"

/* The two required keys, where a case does not give its own. */
#define BASE_MAC "\"gateway_mac\":\"aa:bb:cc:dd:ee:01\","
#define BASE_IP "\"source_ip\":\"192.0.2.10\""

static struct director_config cur, next;

/* Parses `{required keys, extra}` into *cfg with config_load; a failure fails the test. */
static int cfg_from(const char *extra, struct director_config *cfg)
{
	char path[] = "/tmp/tide-reload-plan-XXXXXX", err[512];
	int fd = mkstemp(path), rc;
	FILE *f;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	/* BASE_MAC ends with a comma; BASE_IP needs one before the extra keys. */
	fprintf(f, "{%s%s%s%s}", strstr(extra, "gateway_mac") ? "" : BASE_MAC,
		strstr(extra, "source_ip") ? "" : BASE_IP,
		strstr(extra, "source_ip") || !extra[0] ? "" : ",", extra);
	fclose(f);
	rc = config_load(path, cfg, err, sizeof(err));
	unlink(path);
	CHECK(rc == 0, "config {%s}: %s", extra, err);
	return rc;
}

/* "a,b" of a key list, for comparing with one string. */
static const char *joined(const char *const *keys, uint32_t n)
{
	static char buf[4][256];
	static unsigned int next_buf;
	char *b = buf[next_buf++ % 4];
	size_t used = 0;

	b[0] = '\0';
	for (uint32_t i = 0; i < n; i++)
		used += (size_t)snprintf(b + used, sizeof(buf[0]) - used, "%s%s", i ? "," : "",
					 keys[i]);
	return b;
}

static const struct {
	const char *name;
	const char *cur, *next; /* extra keys of the running config and of the file read */
	const char *serving;	/* path of the serving table, "" for none */
	unsigned int actions;
	enum reload_table_reason table_reason;
	const char *live, *deferred, *restart;
} cases[] = {
	{"unchanged, no table_file", "", "", "", 0, RELOAD_TABLE_NONE, "", "", ""},
	{"unchanged, the configured table serves: re-read it", "\"table_file\":\"/t.bin\"",
	 "\"table_file\":\"/t.bin\"", "/t.bin", RELOAD_TABLE, RELOAD_TABLE_REREAD, "", "", ""},
	{"nothing serves yet: re-read the configured table", "\"table_file\":\"/t.bin\"",
	 "\"table_file\":\"/t.bin\"", "", RELOAD_TABLE, RELOAD_TABLE_REREAD, "", "", ""},
	{"the agent loaded another table: keep it", "\"table_file\":\"/t.bin\"",
	 "\"table_file\":\"/t.bin\"", "/var/lib/tide/agent.bin", 0, RELOAD_TABLE_KEPT_CONTROL, "",
	 "", ""},
	{"the agent's table serves: new hash fields wait for the next load",
	 "\"table_file\":\"/t.bin\"",
	 "\"table_file\":\"/t.bin\",\"hash_fields\":[\"src_addr\",\"src_port\"]", "/agent.bin", 0,
	 RELOAD_TABLE_KEPT_CONTROL, "", "hash_fields", ""},
	{"a new table_file is loaded even over the agent's", "\"table_file\":\"/t.bin\"",
	 "\"table_file\":\"/u.bin\"", "/agent.bin", RELOAD_TABLE, RELOAD_TABLE_NEW_FILE,
	 "table_file", "", ""},
	{"pool names and hash fields apply with the re-read table",
	 "\"table_file\":\"/t.bin\",\"pool_names\":[\"www\"]",
	 "\"table_file\":\"/t.bin\",\"pool_names\":[\"web\"],\"alt_hash_fields\":[\"dst_port\"]",
	 "/t.bin", RELOAD_TABLE, RELOAD_TABLE_REREAD, "pool_names,alt_hash_fields", "", ""},
	{"table_file removed: nothing is unloaded", "\"table_file\":\"/t.bin\"", "", "/t.bin", 0,
	 RELOAD_TABLE_NONE, "", "table_file", ""},
	{"gateway_mac only", "", "\"gateway_mac\":\"aa:bb:cc:dd:ee:02\"", "", RELOAD_GATEWAY,
	 RELOAD_TABLE_NONE, "gateway_mac", "", ""},
	{"source_ip only", "", "\"source_ip\":\"192.0.2.11\"", "", RELOAD_GATEWAY,
	 RELOAD_TABLE_NONE, "source_ip", "", ""},
	{"mtu, burst, idle sleep", "\"mtu\":1500", "\"mtu\":9000,\"burst\":64,\"idle_sleep_us\":10",
	 "", RELOAD_PARAMS, RELOAD_TABLE_NONE, "mtu,burst,idle_sleep_us", "", ""},
	{"control_socket and mbufs need a restart, mtu applies", "",
	 "\"control_socket\":\"/run/other.sock\",\"mbufs\":16383,\"mtu\":1400", "", RELOAD_PARAMS,
	 RELOAD_TABLE_NONE, "mtu", "", "control_socket,mbufs"},
};

void test_reload_plan(void)
{
	struct reload_plan plan;
	char err[256];

	check_current = "reload plan";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cfg_from(cases[i].cur, &cur) || cfg_from(cases[i].next, &next))
			continue;
		reload_plan_make(&cur, &next, cases[i].serving, &plan);
		CHECK(plan.actions == cases[i].actions, "%s: actions 0x%x, want 0x%x",
		      cases[i].name, plan.actions, cases[i].actions);
		CHECK(plan.table_reason == cases[i].table_reason, "%s: table reason %d, want %d",
		      cases[i].name, plan.table_reason, cases[i].table_reason);
		CHECK(strcmp(joined(plan.live, plan.num_live), cases[i].live) == 0,
		      "%s: live \"%s\", want \"%s\"", cases[i].name,
		      joined(plan.live, plan.num_live), cases[i].live);
		CHECK(strcmp(joined(plan.deferred, plan.num_deferred), cases[i].deferred) == 0,
		      "%s: deferred \"%s\", want \"%s\"", cases[i].name,
		      joined(plan.deferred, plan.num_deferred), cases[i].deferred);
		CHECK(strcmp(joined(plan.restart, plan.num_restart), cases[i].restart) == 0,
		      "%s: restart \"%s\", want \"%s\"", cases[i].name,
		      joined(plan.restart, plan.num_restart), cases[i].restart);
		/* What runs afterwards keeps the running value of every restart key. */
		CHECK(strcmp(next.control_socket, cur.control_socket) == 0 &&
			      next.mbufs == cur.mbufs,
		      "%s: restart keys were not put back (%s, %u)", cases[i].name,
		      next.control_socket, next.mbufs);
	}

	/* The command line keeps overriding the file after a reload. */
	if (cfg_from("\"control_socket\":\"/run/a.sock\",\"table_file\":\"/t.bin\"", &next) == 0) {
		CHECK(config_override(&next, "/tmp/x.sock", "/tmp/x.bin", err, sizeof(err)) == 0 &&
			      strcmp(next.control_socket, "/tmp/x.sock") == 0 &&
			      strcmp(next.table_file, "/tmp/x.bin") == 0,
		      "overrides not applied: %s %s", next.control_socket, next.table_file);
		CHECK(config_override(&next, NULL, NULL, err, sizeof(err)) == 0 &&
			      strcmp(next.control_socket, "/tmp/x.sock") == 0,
		      "NULL overrides must change nothing");
		CHECK(config_override(&next, "", NULL, err, sizeof(err)) == -EINVAL &&
			      strstr(err, "--control"),
		      "an empty --control must be refused naming it: %s", err);
	}
}
