/* SPDX-License-Identifier: MIT */
/*
 * One request line -> struct hc_request, with HealthcheckRequest's rules (a strict object: an
 * unknown field is an error). The first broken rule is the reason; the id is kept whenever it
 * could be read, so the agent can match the failure to its request.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tide_healthcheck.h"

static const char *const known_fields[] = {"id",   "kind",	   "target",   "port",
					   "path", "expectStatus", "timeoutMs"};

/*
 * A JSON number that is a whole number in [lo, hi]. JSON.parse reads 5.0 as 5 and zod's int()
 * takes it, so an integral real counts too.
 */
static bool whole_in(const json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i < lo || i > hi)
			return false;
		*out = (int64_t)i;
		return true;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (!(d >= (double)lo && d <= (double)hi) || d != (double)(int64_t)d)
			return false;
		*out = (int64_t)d;
		return true;
	}
	return false;
}

/* "/" then 0..255 characters from 0x21 to 0x7e (the contract's path regex). */
static bool valid_path(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (s == NULL || n < 1 || n > HC_PATH_MAX || s[0] != '/')
		return false;
	for (size_t i = 1; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

static int invalid(char *why, size_t whylen, const char *text)
{
	snprintf(why, whylen, "invalid request: %s", text);
	return -1;
}

static int check_fields(json_t *obj, char *why, size_t whylen)
{
	const char *key;
	json_t *value;

	json_object_foreach(obj, key, value)
	{
		bool known = false;
		for (size_t i = 0; i < sizeof(known_fields) / sizeof(known_fields[0]); i++)
			known = known || strcmp(key, known_fields[i]) == 0;
		if (!known) {
			snprintf(why, whylen, "invalid request: unknown field \"%.40s\"", key);
			return -1;
		}
	}
	return 0;
}

static int fill(json_t *obj, struct hc_request *req, char *why, size_t whylen)
{
	json_t *v;
	int64_t n;
	const char *kind;

	if (check_fields(obj, why, whylen) < 0)
		return -1;
	kind = json_string_value(json_object_get(obj, "kind"));
	if (kind != NULL && strcmp(kind, "gue") == 0)
		req->kind = HC_KIND_GUE;
	else if (kind != NULL && strcmp(kind, "tcp") == 0)
		req->kind = HC_KIND_TCP;
	else if (kind != NULL && strcmp(kind, "http") == 0)
		req->kind = HC_KIND_HTTP;
	else
		return invalid(why, whylen, "kind must be \"gue\", \"tcp\" or \"http\"");

	/* inet_pton takes exactly a dotted quad without leading zeros, as z.ipv4() does. */
	v = json_object_get(obj, "target");
	if (!json_is_string(v) || json_string_length(v) >= sizeof(req->target_text) ||
	    inet_pton(AF_INET, json_string_value(v), &req->target) != 1)
		return invalid(why, whylen, "target must be an IPv4 address (dotted quad)");
	memcpy(req->target_text, json_string_value(v), json_string_length(v) + 1);

	if (!whole_in(json_object_get(obj, "port"), 1, 65535, &n))
		return invalid(why, whylen, "port must be an integer from 1 to 65535");
	req->port = (uint16_t)n;

	v = json_object_get(obj, "path");
	if (v != NULL && !valid_path(v))
		return invalid(
			why, whylen,
			"path must be an absolute path of printable characters (at most 256)");
	snprintf(req->path, sizeof(req->path), "%s",
		 v != NULL ? json_string_value(v) : HC_HTTP_DEFAULT_PATH);

	v = json_object_get(obj, "expectStatus");
	if (v != NULL && !whole_in(v, 100, 599, &n))
		return invalid(why, whylen, "expectStatus must be an integer from 100 to 599");
	req->expect_status = v != NULL ? (int)n : HC_HTTP_DEFAULT_STATUS;

	if (!whole_in(json_object_get(obj, "timeoutMs"), HC_TIMEOUT_MIN_MS, HC_TIMEOUT_MAX_MS, &n))
		return invalid(why, whylen, "timeoutMs must be an integer from 10 to 60000");
	req->timeout_ms = (int)n;
	return 0;
}

int hc_parse_request(const char *line, size_t len, struct hc_request *req, char *why, size_t whylen)
{
	json_error_t err;
	json_t *obj;
	int64_t id;
	int rc;

	memset(req, 0, sizeof(*req));
	if (len == 0)
		return invalid(why, whylen, "empty line");
	/* Duplicate keys: the last wins, as with JSON.parse on the agent's side. */
	obj = json_loadb(line, len, 0, &err);
	if (obj == NULL) {
		snprintf(why, whylen, "invalid JSON: %s", err.text);
		return -1;
	}
	if (!json_is_object(obj)) {
		json_decref(obj);
		return invalid(why, whylen, "not a JSON object");
	}
	if (!whole_in(json_object_get(obj, "id"), 1, HC_ID_MAX, &id)) {
		json_decref(obj);
		return invalid(why, whylen, "id must be an integer from 1 to 2147483647");
	}
	req->id = id;
	rc = fill(obj, req, why, whylen);
	json_decref(obj);
	return rc;
}
