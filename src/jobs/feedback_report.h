/* feedback_report.h: how right verdicts were (GET /v1/reports/accuracy,
 * svcadm report accuracy): the bulk results verified in a window, matched
 * to the delivery outcomes of the same account by the keyed hash of the
 * normalised address (computed here, at report time: no address is
 * stored with the outcomes, no hash with the results).
 *
 * Each result row counts once: under the latest outcome of its address
 * that occurred at or after the row was verified (delivered, hard_bounce,
 * soft_bounce, complaint), or under no_outcome. Rows are counted per
 * classification and per provider (NULL provider: "none"); for the
 * calibration, each address with an outcome counts once per provider (and
 * mail host) and classification, under its latest result (by_class). unknown_share
 * is the share of rows classified unknown. Stability: the addresses (per
 * account) verified more than once in the window, and how many of them got
 * the same classification every time. */
#ifndef SVC_FEEDBACK_REPORT_H
#define SVC_FEEDBACK_REPORT_H
#include "core/db.h"
#include "engine/verdict.h"
#include "jobs/feedback.h"
#include <jansson.h>
#include <time.h>

struct feedback_tally {
	long long	 verified;
	long long	 outcome[FEEDBACK_OUTCOME__MAX];
	long long	 no_outcome;
};

struct feedback_provider_tally {
	char			 provider[254];
	struct feedback_tally	 t;
	/* the calibration's counts: each address of an account once, under
	 * its latest result (in the window) that has an outcome: addresses,
	 * not rows */
	struct feedback_tally	 by_class[VERDICT_CLASS__MAX];
};

/* The calibration's counts of one mail host (a result's first MX host),
 * as by_class above. */
struct feedback_host_tally {
	char			 host[254];
	char			 provider[254];
	struct feedback_tally	 by_class[VERDICT_CLASS__MAX];
};

struct feedback_report {
	time_t			 since, until;
	struct feedback_tally	 all;
	struct feedback_tally	 by_class[VERDICT_CLASS__MAX];
	struct feedback_provider_tally *prov;	/* by name */
	size_t			 nprov;
	struct feedback_host_tally *hosts;	/* in no order */
	size_t			 nhosts;
	long long		 singles;	/* single verifications counted */
	long long		 repeated;	/* addresses verified twice+ */
	long long		 repeated_same;	/* ... always the same class */
};

/* account NULL: every account (each matched to its own outcomes).
 * Results verified in [since, until). DB_OK or the error; free with
 * feedback_report_free. */
enum db_err feedback_report_build(struct db *, const struct addrhash_key *,
	    const char *account, time_t since, time_t until,
	    struct feedback_report *);
/* The report as the API answers it. */
json_t	*feedback_report_json(const struct feedback_report *);
void	 feedback_report_free(struct feedback_report *);
#endif
