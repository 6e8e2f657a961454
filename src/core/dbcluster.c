/* dbcluster.c: asks each database endpoint for its Galera state (see
 * dbcluster.h). Each is a fresh connection with a 2 s connect timeout, so
 * a dead node costs at most that; what the server says is kept to short,
 * printable text. */
#include "core/dbcluster.h"
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
dbcluster_copy(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

static void
dbcluster_ask(const struct conf *c, const char *host, unsigned port,
    const char *sock, struct dbcluster_node *nd)
{
	unsigned int timeout = 2;
	MYSQL_RES *res;
	MYSQL_ROW row;
	MYSQL *my;

	snprintf(nd->state, sizeof(nd->state), "unreachable");
	if ((my = mysql_init(NULL)) == NULL)
		return;
	mysql_options(my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	if (mysql_real_connect(my, host, conf_str(c, CONF_DB_USER),
	    conf_str(c, CONF_DB_PASSWORD), conf_str(c, CONF_DB_NAME), port,
	    sock && *sock ? sock : NULL, 0) == NULL) {
		dbcluster_copy(nd->error, sizeof(nd->error), mysql_error(my));
		mysql_close(my);
		return;
	}
	nd->reachable = 1;
	nd->cluster_size = 1;
	snprintf(nd->state, sizeof(nd->state), "standalone");
	if (mysql_query(my, "SHOW STATUS WHERE Variable_name IN ("
	    "'wsrep_local_state_comment', 'wsrep_cluster_size')") == 0 &&
	    (res = mysql_store_result(my)) != NULL) {
		while ((row = mysql_fetch_row(res)) != NULL) {
			if (row[0] == NULL || row[1] == NULL)
				continue;
			if (strcmp(row[0], "wsrep_cluster_size") == 0)
				nd->cluster_size = strtoll(row[1], NULL, 10);
			else
				dbcluster_copy(nd->state, sizeof(nd->state),
				    row[1]);
		}
		mysql_free_result(res);
	}
	if (mysql_query(my, "SELECT @@global.wsrep_on") == 0 &&
	    (res = mysql_store_result(my)) != NULL) {
		row = mysql_fetch_row(res);
		nd->galera = row && row[0] && strcmp(row[0], "1") == 0;
		mysql_free_result(res);
	}
	if (!nd->galera) {
		snprintf(nd->state, sizeof(nd->state), "standalone");
		nd->cluster_size = 1;
	}
	mysql_close(my);
}

int
dbcluster_probe(const struct conf *c, struct dbcluster_node *out,
    size_t max, size_t *n)
{
	struct dbhost hosts[DBHOSTS_MAX];
	struct buf err;
	size_t nh, i;
	int rc;

	*n = 0;
	buf_init(&err, 256);
	rc = dbhosts_parse(conf_str(c, CONF_DB_HOSTS), hosts, DBHOSTS_MAX,
	    &nh, &err);
	buf_free(&err);
	if (rc == -1)
		return -1;
	if (nh == 0 && max > 0) {
		memset(&out[0], 0, sizeof(out[0]));
		snprintf(out[0].endpoint, sizeof(out[0].endpoint), "%s:%ld",
		    conf_str(c, CONF_DB_HOST), conf_int(c, CONF_DB_PORT));
		dbcluster_ask(c, conf_str(c, CONF_DB_HOST),
		    (unsigned)conf_int(c, CONF_DB_PORT),
		    conf_str(c, CONF_DB_SOCKET), &out[0]);
		*n = 1;
		return 0;
	}
	for (i = 0; i < nh && i < max; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		dbhosts_format(&hosts[i], out[i].endpoint,
		    sizeof(out[i].endpoint));
		dbcluster_ask(c, hosts[i].host, hosts[i].port, NULL, &out[i]);
	}
	*n = i;
	return 0;
}

int
dbcluster_node_ready(const struct dbcluster_node *nd)
{
	return nd->reachable && (!nd->galera ||
	    strcmp(nd->state, "Synced") == 0);
}
