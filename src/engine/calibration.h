/* calibration.h: the calibrated score (issue 29): a verdict's score from
 * the delivery outcomes observed for its provider and classification, with
 * a Beta prior. Pure functions and an in-memory table, no I/O (the table
 * is read by calibration_db.h and written by jobs/calibration_update.h).
 *
 * The maths. For a verdict of classification c at provider p whose rules
 * give the score s (verdict_score, 0-100):
 *   D_c, N_c   delivered, and delivered + hard-bounced, over every
 *              provider's results of classification c in the window;
 *   D_p, N_p   the same for provider p alone;
 *   K          CALIBRATION_PRIOR_WEIGHT (2: the weight of Beta(1,1)).
 *   m = (D_c + K s/100) / (N_c + K)   the classification's rate over all
 *                                     providers, shrunk towards s/100;
 *   r = (D_p + K m) / (N_p + K)       the provider's rate, shrunk towards
 *                                     m: the mean of Beta(D_p + K m,
 *                                     N_p - D_p + K (1 - m));
 *   D_h, N_h   the same for the verdict's mail host h (its first MX
 *              host) alone, a part of p's;
 *   q = (D_h + K r) / (N_h + K)       the mail host's rate, shrunk
 *                                     towards its provider's r;
 *   score = 100 q rounded half up, in whole numbers (exact integer maths).
 * A host with no outcome has q = r: the provider's rate. The score is
 * calibrated when N_p is at least the threshold (calibration_min_outcomes);
 * else the rules' s stands. A calibrated
 * catch-all verdict's send verdict follows the calibrated score
 * (calibration_catch_all). */
#ifndef SVC_CALIBRATION_H
#define SVC_CALIBRATION_H
#include "engine/verdict.h"
#include <stddef.h>

#define CALIBRATION_PRIOR_WEIGHT	2
#define CALIBRATION_PROVIDER_MAX	254	/* = PROVIDERS_NAME_MAX */

enum calibration_basis {
	CALIBRATION_RULES,
	CALIBRATION_CALIBRATED,
	CALIBRATION_BASIS__MAX
};
extern const char *const calibration_basis_names[CALIBRATION_BASIS__MAX];

struct calibration_counts {
	long long	 delivered;
	long long	 bounced;	/* hard bounces */
};

/* 100 q as above, 0-100 (negative counts are taken as 0; host NULL:
 * none, q = r). */
int	 calibration_score(int rules_score,
	    const struct calibration_counts *host,
	    const struct calibration_counts *provider,
	    const struct calibration_counts *all);
/* The score of a verdict and its basis: calibrated when provider's
 * outcomes (delivered + bounced) reach min_outcomes (at least 1). */
int	 calibration_apply(int rules_score,
	    const struct calibration_counts *host,
	    const struct calibration_counts *provider,
	    const struct calibration_counts *all, long long min_outcomes,
	    enum calibration_basis *basis);
/* The catch-all send verdict of a calibrated verdict whose rules gave
 * rules (not VERDICT_CA_NONE) and whose calibrated score is score:
 * send_safe when score >= safe_min, avoid when score < avoid_below,
 * else send_with_caution; but avoid whenever the rules said avoid (no web
 * presence, a machine-made or role local part: a delivery rate says
 * nothing of spam traps, which take mail). VERDICT_CA_NONE stays. */
enum verdict_catch_all calibration_catch_all(enum verdict_catch_all rules,
	    int score, int safe_min, int avoid_below);
/* A basis from its name: 0, or -1. NULL or unknown names are "rules". */
int	 calibration_basis_parse(const char *, enum calibration_basis *);

/* The counts of every (provider, classification), as the table holds
 * them, with each classification's sum over providers, and of every
 * (mail host, classification). */
struct calibration_row {
	char			 provider[CALIBRATION_PROVIDER_MAX]; /* or host */
	enum verdict_class	 cls;
	struct calibration_counts n;
};
struct calibration_table {
	struct calibration_row	*rows;		/* sorted by provider, class */
	size_t			 n;
	struct calibration_row	*hosts;		/* sorted by host, class */
	size_t			 nhosts;
	/* each classification's sum over providers: calibration_table_done
	 * sums the rows; a reader that keeps only some rows sets it */
	struct calibration_counts all[VERDICT_CLASS__MAX];
};

/* Adds a row (counts of a (provider, class) seen twice are added): 0, or
 * -1 out of memory. Call calibration_table_done before finding. */
int	 calibration_table_add(struct calibration_table *, const char *provider,
	    enum verdict_class, long long delivered, long long bounced);
/* Adds a mail host's row (the same way): 0, or -1 out of memory. */
int	 calibration_table_add_host(struct calibration_table *,
	    const char *host, enum verdict_class, long long delivered,
	    long long bounced);
/* Sorts the rows, merges duplicates and sums each classification (over
 * the providers' rows). */
void	 calibration_table_done(struct calibration_table *);
/* The counts of (provider, class), zero when none; *all the class's. */
void	 calibration_table_find(const struct calibration_table *,
	    const char *provider, enum verdict_class,
	    struct calibration_counts *prov, struct calibration_counts *all);
/* The counts of (mail host, class), zero when none (host NULL too). */
void	 calibration_table_find_host(const struct calibration_table *,
	    const char *host, enum verdict_class,
	    struct calibration_counts *out);
void	 calibration_table_free(struct calibration_table *);
#endif
