/* webadm.c: svcadm's side of the dashboard's sign-in (webadm.h); the
 * passwords, sessions and invitations themselves are core/websession.c. */
#include "admin/webadm.h"
#include "core/websession.h"
#include <sodium.h>
#include <string.h>

int
webadm_set_password(struct db *db, const char *account, FILE *in,
    struct buf *err)
{
	char line[WEBSESSION_PASSWORD_MAX + 2];
	enum websession_result wr;
	size_t n;

	if (fgets(line, sizeof(line), in) == NULL) {
		buf_puts(err, "give the password on standard input");
		return -1;
	}
	n = strcspn(line, "\r\n");
	if (line[n] == '\0' && n > WEBSESSION_PASSWORD_MAX) {
		sodium_memzero(line, sizeof(line));
		buf_printf(err, "the password is longer than %d characters",
		    WEBSESSION_PASSWORD_MAX);
		return -1;
	}
	line[n] = '\0';
	wr = websession_set_password(db, account, line);
	sodium_memzero(line, sizeof(line));
	if (wr == WEBSESSION_INVALID)
		buf_printf(err, "the password must have %d to %d characters",
		    WEBSESSION_PASSWORD_MIN, WEBSESSION_PASSWORD_MAX);
	else if (wr == WEBSESSION_REFUSED)
		buf_printf(err, "no account %s", account);
	else if (wr != WEBSESSION_OK)
		buf_printf(err, "setting the password failed: %s",
		    db_error(db));
	return wr == WEBSESSION_OK ? 0 : -1;
}

int
webadm_invite(struct db *db, const struct conf *c, const char *account,
    FILE *out, struct buf *err)
{
	char token[WEBSESSION_ID_MAX];
	enum websession_result wr;

	wr = websession_invite(db, account,
	    conf_int(c, CONF_INVITE_TTL_SECONDS), token);
	if (wr == WEBSESSION_REFUSED)
		buf_printf(err, "no account %s", account);
	else if (wr != WEBSESSION_OK)
		buf_printf(err, "making the invitation failed: %s",
		    db_error(db));
	else
		fprintf(out, "%s/app/invite#%s\n", conf_str(c, CONF_BASE_URL),
		    token);
	return wr == WEBSESSION_OK ? 0 : -1;
}
