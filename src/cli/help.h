/* help.h: svc's usage texts: the list of commands and each command's
 * synopsis and options (svc help [command], svc <command> --help). */
#ifndef SVC_CLI_HELP_H
#define SVC_CLI_HELP_H
#include <stdio.h>

/* The overview: every command, the common options, the exit statuses. */
void	 help_overview(FILE *);
/* One command ("bulk create"); the overview when cmd is NULL. 0, or -1
 * when there is no such command. */
int	 help_command(FILE *, const char *cmd);
#endif
