/* dbcluster.h: the state of every database endpoint (db_hosts, else the
 * single db_host), each asked on its own short connection: for svcadm
 * status and doctor. */
#ifndef SVC_DBCLUSTER_H
#define SVC_DBCLUSTER_H
#include "util/conf.h"
#include "util/dbhosts.h"
#include <stddef.h>

struct dbcluster_node {
	char		endpoint[DBHOSTS_HOST_MAX + 16];
	int		reachable;
	int		galera;		/* wsrep_on */
	char		state[32];	/* wsrep_local_state_comment, or
					 * "unreachable", "standalone" */
	long long	cluster_size;	/* wsrep_cluster_size; 1 standalone */
	char		error[160];	/* why unreachable (cleaned) */
};

/* Fills out[0..*n) with one entry per endpoint. 0, or -1 (bad db_hosts). */
int	dbcluster_probe(const struct conf *, struct dbcluster_node *out,
	    size_t max, size_t *n);
/* 1 when node is ready for use (reachable and Synced, or standalone). */
int	dbcluster_node_ready(const struct dbcluster_node *);
#endif
