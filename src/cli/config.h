/* config.h: svc's own config file, $XDG_CONFIG_HOME/svc/config (else
 * ~/.config/svc/config): "name = value" lines for api_key and base_url.
 * Written owner-only (0600, in a 0700 folder) in one rename; read only
 * while nobody else can read or write it. */
#ifndef SVC_CLI_CONFIG_H
#define SVC_CLI_CONFIG_H
#include <limits.h>
#include <sys/types.h>
#include "util/buf.h"

enum config_rc {
	CONFIG_OK,
	CONFIG_MISSING,		/* no file (nothing set yet) */
	CONFIG_EXPOSED,		/* others may read or write it: refused */
	CONFIG_ERROR,		/* unreadable, or a line that is not name = value */
	CONFIG__MAX
};

struct config {
	char	 path[PATH_MAX];
	char	*api_key;	/* NULL when not set */
	char	*base_url;
	mode_t	 mode;		/* of the file read */
};

/* Finds the path (XDG_CONFIG_HOME, else HOME/.config) and reads the file.
 * With check_mode, a file that others may read or write, or that another
 * user owns, is CONFIG_EXPOSED and nothing of it is taken; err says why
 * and what to do. */
enum config_rc config_load(struct config *, int check_mode, struct buf *err);
/* Writes every value set: a new 0600 file in the same folder (made 0700
 * when missing), synced, renamed over the old one. */
int	 config_save(const struct config *, struct buf *err);
void	 config_free(struct config *);
#endif
