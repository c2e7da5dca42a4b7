/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tide_forward.h"

static const char *const hash_field_names[] = {"src_addr", "dst_addr", "src_port", "dst_port"};

const char *config_hash_field_name(unsigned int bit)
{
	for (unsigned int i = 0; i < 4; i++)
		if (bit == 1u << i)
			return hash_field_names[i];
	return "unknown";
}

__attribute__((format(printf, 3, 4))) static int config_fail(char *err, size_t err_len,
							     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int config_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (strlen(s) != 17 || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
				      &b[4], &b[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		/* sscanf accepts a sign or space; the fixed positions must be hex digits. */
		if (!strchr("0123456789abcdefABCDEF", s[i * 3]) || s[i * 3] == '\0' ||
		    !strchr("0123456789abcdefABCDEF", s[i * 3 + 1]) || s[i * 3 + 1] == '\0')
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

int config_parse_ipv4(const char *s, uint32_t *addr)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*addr = a.s_addr;
	return 0;
}

int config_check_pool_names(const char *const *names, uint32_t n, char *err, size_t err_len)
{
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (len == 0)
			return config_fail(err, err_len, "pool name %u is empty", i);
		if (len >= CONFIG_POOL_NAME_MAX)
			return config_fail(err, err_len, "pool name %u is longer than %u bytes", i,
					   CONFIG_POOL_NAME_MAX - 1);
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				return config_fail(err, err_len,
						   "pool name \"%s\" appears twice (%u and %u)",
						   names[i], j, i);
	}
	return 0;
}

static int config_string(json_t *v, const char *key, char *out, size_t out_size, char *err,
			 size_t err_len)
{
	if (!json_is_string(v))
		return config_fail(err, err_len, "\"%s\" must be a string", key);
	if (json_string_length(v) == 0)
		return config_fail(err, err_len, "\"%s\" must not be empty", key);
	if (json_string_length(v) >= out_size ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return config_fail(err, err_len,
				   "\"%s\" is too long or contains NUL (max %zu bytes)", key,
				   out_size - 1);
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int config_uint(json_t *v, const char *key, uint32_t min, uint32_t max, uint32_t *out,
		       char *err, size_t err_len)
{
	json_int_t i;

	if (!json_is_integer(v))
		return config_fail(err, err_len, "\"%s\" must be an integer", key);
	i = json_integer_value(v);
	if (i < (json_int_t)min || i > (json_int_t)max)
		return config_fail(err, err_len, "\"%s\" is %lld, must be %u..%u", key,
				   (long long)i, min, max);
	*out = (uint32_t)i;
	return 0;
}

static int config_hash_fields(json_t *v, const char *key, int allow_empty, uint8_t *out, char *err,
			      size_t err_len)
{
	size_t i;
	json_t *e;
	uint8_t fields = 0;

	if (!json_is_array(v))
		return config_fail(err, err_len, "\"%s\" must be an array of field names", key);
	if (json_array_size(v) == 0 && !allow_empty)
		return config_fail(err, err_len, "\"%s\" must name at least one field", key);
	json_array_foreach(v, i, e)
	{
		unsigned int bit = 0;

		if (!json_is_string(e))
			return config_fail(err, err_len, "\"%s\"[%zu] must be a string", key, i);
		for (unsigned int f = 0; f < 4; f++)
			if (strcmp(json_string_value(e), hash_field_names[f]) == 0)
				bit = 1u << f;
		if (!bit)
			return config_fail(err, err_len,
					   "\"%s\"[%zu] is \"%s\"; expected src_addr, dst_addr, "
					   "src_port or dst_port",
					   key, i, json_string_value(e));
		if (fields & bit)
			return config_fail(err, err_len, "\"%s\" lists \"%s\" twice", key,
					   json_string_value(e));
		fields |= (uint8_t)bit;
	}
	*out = fields;
	return 0;
}

static int config_pool_names(json_t *v, struct director_config *cfg, char *err, size_t err_len)
{
	const char *names[TIDE_MAX_TABLES];
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return config_fail(err, err_len, "\"pool_names\" must be an array of strings");
	if (json_array_size(v) > TIDE_MAX_TABLES)
		return config_fail(err, err_len, "\"pool_names\" has %zu names (max %u)",
				   json_array_size(v), TIDE_MAX_TABLES);
	json_array_foreach(v, i, e)
	{
		if (!json_is_string(e))
			return config_fail(err, err_len, "\"pool_names\"[%zu] must be a string", i);
		names[i] = json_string_value(e);
	}
	if (config_check_pool_names(names, (uint32_t)json_array_size(v), err, err_len)) {
		char why[200];

		snprintf(why, sizeof(why), "%s", err);
		return config_fail(err, err_len, "\"pool_names\": %s", why);
	}
	for (i = 0; i < json_array_size(v); i++)
		snprintf(cfg->pool_names[i], CONFIG_POOL_NAME_MAX, "%s", names[i]);
	cfg->num_pool_names = (uint32_t)json_array_size(v);
	return 0;
}

static int config_key(const char *key, json_t *v, struct director_config *cfg, int *have_mac,
		      int *have_ip, char *err, size_t err_len)
{
	char buf[64];

	if (strcmp(key, "control_socket") == 0)
		return config_string(v, key, cfg->control_socket, sizeof(cfg->control_socket), err,
				     err_len);
	if (strcmp(key, "table_file") == 0)
		return config_string(v, key, cfg->table_file, sizeof(cfg->table_file), err,
				     err_len);
	if (strcmp(key, "pool_names") == 0)
		return config_pool_names(v, cfg, err, err_len);
	if (strcmp(key, "hash_fields") == 0)
		return config_hash_fields(v, key, 0, &cfg->hash_fields, err, err_len);
	if (strcmp(key, "alt_hash_fields") == 0)
		return config_hash_fields(v, key, 1, &cfg->alt_hash_fields, err, err_len);
	if (strcmp(key, "gateway_mac") == 0) {
		if (config_string(v, key, buf, sizeof(buf), err, err_len) ||
		    config_parse_mac(buf, cfg->gateway_mac))
			return config_fail(err, err_len,
					   "\"gateway_mac\" must be a MAC address like "
					   "\"aa:bb:cc:dd:ee:ff\"");
		*have_mac = 1;
		return 0;
	}
	if (strcmp(key, "source_ip") == 0) {
		if (config_string(v, key, buf, sizeof(buf), err, err_len) ||
		    config_parse_ipv4(buf, &cfg->source_ip))
			return config_fail(err, err_len,
					   "\"source_ip\" must be an IPv4 address like "
					   "\"192.0.2.10\"");
		*have_ip = 1;
		return 0;
	}
	if (strcmp(key, "mtu") == 0)
		return config_uint(v, key, CONFIG_MTU_MIN, CONFIG_MTU_MAX, &cfg->mtu, err, err_len);
	if (strcmp(key, "burst") == 0)
		return config_uint(v, key, 1, CONFIG_BURST_MAX, &cfg->burst, err, err_len);
	if (strcmp(key, "idle_sleep_us") == 0)
		return config_uint(v, key, 0, 100000, &cfg->idle_sleep_us, err, err_len);
	if (strcmp(key, "mbufs") == 0)
		return config_uint(v, key, CONFIG_MBUFS_MIN, CONFIG_MBUFS_MAX, &cfg->mbufs, err,
				   err_len);
	return config_fail(err, err_len,
			   "unknown key \"%s\" (known: control_socket, table_file, pool_names, "
			   "hash_fields, alt_hash_fields, gateway_mac, source_ip, mtu, burst, "
			   "mbufs, idle_sleep_us)",
			   key);
}

int config_load(const char *path, struct director_config *cfg, char *err, size_t err_len)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *key;
	int have_mac = 0, have_ip = 0, rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->control_socket, sizeof(cfg->control_socket), "%s",
		 CONFIG_DEFAULT_CONTROL_SOCKET);
	cfg->hash_fields = TIDE_HASH_SRC_ADDR;
	cfg->mtu = CONFIG_DEFAULT_MTU;
	cfg->burst = CONFIG_DEFAULT_BURST;
	cfg->mbufs = CONFIG_DEFAULT_MBUFS;

	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return config_fail(err, err_len, "config %s: line %d column %d: %s", path,
				   jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return config_fail(err, err_len, "%s: the top level must be a JSON object", path);
	}
	json_object_foreach(root, key, v)
	{
		rc = config_key(key, v, cfg, &have_mac, &have_ip, err, err_len);
		if (rc)
			break;
	}
	json_decref(root);
	if (!rc && !have_mac)
		rc = config_fail(err, err_len, "\"gateway_mac\" is required");
	if (!rc && !have_ip)
		rc = config_fail(err, err_len, "\"source_ip\" is required");
	if (rc) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, err_len, "config %s: %s", path, why);
	}
	return rc;
}

int config_override(struct director_config *cfg, const char *control, const char *table, char *err,
		    size_t err_len)
{
	if (control) {
		if (!control[0] || strlen(control) >= sizeof(cfg->control_socket))
			return config_fail(err, err_len,
					   "--control path is empty or longer than %zu bytes",
					   sizeof(cfg->control_socket) - 1);
		snprintf(cfg->control_socket, sizeof(cfg->control_socket), "%s", control);
	}
	if (table) {
		if (!table[0] || strlen(table) >= sizeof(cfg->table_file))
			return config_fail(err, err_len,
					   "--table path is empty or longer than %zu bytes",
					   sizeof(cfg->table_file) - 1);
		snprintf(cfg->table_file, sizeof(cfg->table_file), "%s", table);
	}
	return 0;
}
