/* SPDX-License-Identifier: MIT */
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_log.h>

#include "worker.h"

#define RTE_LOGTYPE_TIDE RTE_LOGTYPE_USER1

static const struct director_config *table_cfg;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
/* RCU-protected: workers load it with acquire once per burst. */
static struct tide_fwd_set *table_set;
/* Guarded by table_lock. */
static struct table_info table_meta;

void table_init(const struct director_config *cfg)
{
	table_cfg = cfg;
}

const struct tide_fwd_set *table_current(void)
{
	return __atomic_load_n(&table_set, __ATOMIC_ACQUIRE);
}

void table_info_get(struct table_info *info)
{
	pthread_mutex_lock(&table_lock);
	*info = table_meta;
	pthread_mutex_unlock(&table_lock);
}

static int table_fail(struct table_error *err, const char *code, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int table_fail(struct table_error *err, const char *code, int rc, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->has_glbd = false;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * Reads the whole file into a malloc'd buffer. Loads run on the control thread, so nothing here
 * may block: a FIFO or device is refused after stat(), before open() (opening a FIFO for reading
 * waits for a writer), and O_NONBLOCK covers a file swapped for one in between.
 */
static int table_read_file(const char *path, uint8_t **buf, size_t *len, struct table_error *err)
{
	struct stat st;
	uint8_t *p;
	size_t done = 0;
	int fd, rc;

	if (stat(path, &st) < 0) {
		rc = -errno;
		return table_fail(err, "io_error", rc, "cannot open %s: %s", path, strerror(-rc));
	}
	if (!S_ISREG(st.st_mode))
		return table_fail(err, "io_error", -EINVAL,
				  "%s is not a regular file (a FIFO, device or directory)", path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		return table_fail(err, "io_error", rc, "cannot open %s: %s", path, strerror(-rc));
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return table_fail(err, "io_error", rc, "cannot stat %s: %s", path, strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return table_fail(err, "io_error", -EINVAL,
				  "%s is not a regular file (a FIFO, device or directory)", path);
	}
	/* Anything larger than the largest valid file is refused by size before reading it. */
	if ((size_t)st.st_size > tide_glbd_file_size(TIDE_MAX_TABLES, TIDE_GLBD_VERSION_3)) {
		close(fd);
		err->code = "invalid_table";
		err->has_glbd = true;
		tide_glbd_fail(&err->glbd, "bad_size", -1, -1, -1, -1,
			       "file is %lld bytes, more than %u tables", (long long)st.st_size,
			       TIDE_MAX_TABLES);
		snprintf(err->message, sizeof(err->message), "%s: %s", path, err->glbd.message);
		return -EINVAL;
	}
	p = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!p) {
		close(fd);
		return table_fail(err, "internal", -ENOMEM, "out of memory reading %s", path);
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, p + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			free(p);
			close(fd);
			return table_fail(err, "io_error", rc, "cannot read %s: %s", path,
					  n < 0 ? strerror(-rc) : "file shrank while reading");
		}
		done += (size_t)n;
	}
	close(fd);
	*buf = p;
	*len = done;
	return 0;
}

/*
 * sha256 of table `t` as a 1-table GLBD file of the loaded file's version (v3: with its trailer
 * entry): the console hashes a pool's own file the same way.
 */
static int table_content_hash(const struct tide_fwd_set *set, uint32_t t, char hex[65])
{
	const uint8_t *file = set->file;
	uint8_t header[TIDE_GLBD_HEADER_SIZE];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok;

	if (!ctx)
		return -ENOMEM;
	memcpy(header, file, sizeof(header));
	header[8] = 1; /* num_tables = 1, little-endian */
	header[9] = 0;
	header[10] = 0;
	header[11] = 0;
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(ctx, header, sizeof(header)) &&
	     EVP_DigestUpdate(ctx, tide_glbd_table(file, t), TIDE_GLBD_TABLE_SIZE) &&
	     (set->version != TIDE_GLBD_VERSION_3 ||
	      EVP_DigestUpdate(ctx, tide_glbd_trailer(file, set->num_tables, t),
			       TIDE_GLBD_TRAILER_ENTRY_SIZE)) &&
	     EVP_DigestFinal_ex(ctx, md, &md_len);
	EVP_MD_CTX_free(ctx);
	if (!ok || md_len != 32)
		return -EIO;
	for (unsigned int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

static double table_ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Fills `meta->pools` names: request names, else config names if the count fits, else "0".. */
static int table_name_pools(struct table_info *meta, uint32_t n_tables, const char *const *names,
			    uint32_t num_names, struct table_error *err)
{
	char why[256];

	if (names) {
		if (num_names != n_tables) {
			err->code = "invalid_table";
			err->has_glbd = true;
			tide_glbd_fail(&err->glbd, "pool_names", -1, -1, -1, -1,
				       "%u pool names for a file with %u tables", num_names,
				       n_tables);
			snprintf(err->message, sizeof(err->message), "%s", err->glbd.message);
			return -EINVAL;
		}
		if (config_check_pool_names(names, num_names, why, sizeof(why))) {
			err->code = "invalid_table";
			err->has_glbd = true;
			tide_glbd_fail(&err->glbd, "pool_names", -1, -1, -1, -1, "%s", why);
			snprintf(err->message, sizeof(err->message), "%s", why);
			return -EINVAL;
		}
		for (uint32_t i = 0; i < n_tables; i++)
			snprintf(meta->pools[i].name, sizeof(meta->pools[i].name), "%s", names[i]);
	} else if (table_cfg && table_cfg->num_pool_names == n_tables) {
		for (uint32_t i = 0; i < n_tables; i++)
			snprintf(meta->pools[i].name, sizeof(meta->pools[i].name), "%s",
				 table_cfg->pool_names[i]);
	} else {
		for (uint32_t i = 0; i < n_tables; i++)
			snprintf(meta->pools[i].name, sizeof(meta->pools[i].name), "%u", i);
	}
	meta->num_pools = n_tables;
	return 0;
}

int table_load(const char *path, const char *const *names, uint32_t num_names,
	       struct table_info *info, struct table_error *err)
{
	static struct table_info meta; /* built under table_lock; too big for a thread stack */
	struct tide_fwd_set *set = NULL, *old;
	/* v2 tables are hashed on the configured fields (src_addr without a config). */
	const struct tide_hash_config defaults = {table_cfg ? table_cfg->hash_fields
							    : TIDE_HASH_SRC_ADDR,
						  table_cfg ? table_cfg->alt_hash_fields : 0};
	struct timespec t0, now;
	uint8_t *file = NULL;
	size_t len = 0;
	int rc;

	if (pthread_mutex_trylock(&table_lock) != 0)
		return table_fail(err, "busy", -EBUSY, "another table load is in progress");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&meta, 0, sizeof(meta));

	rc = table_read_file(path, &file, &len, err);
	if (rc)
		goto out;
	rc = tide_fwd_set_build(file, len, &defaults, &set, &err->glbd);
	if (rc == -EINVAL) {
		err->code = "invalid_table";
		err->has_glbd = true;
		snprintf(err->message, sizeof(err->message), "%s: %s", path, err->glbd.message);
		goto out;
	}
	if (rc) {
		table_fail(err, "internal", rc, "cannot build the table set: %s", strerror(-rc));
		goto out;
	}
	rc = table_name_pools(&meta, set->num_tables, names, num_names, err);
	if (rc)
		goto out;
	clock_gettime(CLOCK_REALTIME, &now);
	for (uint32_t t = 0; t < set->num_tables; t++) {
		struct table_pool *p = &meta.pools[t];

		p->hash = set->tables[t].hash;
		rc = table_content_hash(set, t, p->content_hash);
		if (rc) {
			table_fail(err, "internal", rc, "sha256 failed");
			goto out;
		}
		/* A pool whose content did not change keeps the time it was first loaded. */
		p->loaded_at = now;
		for (uint32_t o = 0; o < table_meta.num_pools; o++)
			if (strcmp(table_meta.pools[o].name, p->name) == 0 &&
			    strcmp(table_meta.pools[o].content_hash, p->content_hash) == 0)
				p->loaded_at = table_meta.pools[o].loaded_at;
	}

	/* Publish, then wait until no worker can still hold the old set before freeing it. */
	old = table_set;
	__atomic_store_n(&table_set, set, __ATOMIC_RELEASE);
	set = NULL;
	if (old) {
		rte_rcu_qsbr_synchronize(worker_rcu, RTE_QSBR_THRID_INVALID);
		tide_fwd_set_free(old);
	}
	meta.generation = table_meta.generation + 1;
	snprintf(meta.path, sizeof(meta.path), "%s", path);
	meta.loaded_at = now;
	meta.load_ms = table_ms_since(&t0);
	table_meta = meta;
	if (info)
		*info = meta;
	RTE_LOG(INFO, TIDE, "table %s loaded: generation %llu, %u pools, %.1f ms\n", path,
		(unsigned long long)meta.generation, meta.num_pools, meta.load_ms);
	rc = 0;
out:
	if (rc)
		RTE_LOG(ERR, TIDE, "table %s refused (%s): %s\n", path, err->code, err->message);
	tide_fwd_set_free(set);
	free(file);
	pthread_mutex_unlock(&table_lock);
	return rc;
}

void table_free(void)
{
	pthread_mutex_lock(&table_lock);
	tide_fwd_set_free(table_set);
	table_set = NULL;
	pthread_mutex_unlock(&table_lock);
}
