/* hex.h: lower-case hexadecimal encoding, and the value of a digit. */
#ifndef SVC_HEX_H
#define SVC_HEX_H
#include <stddef.h>
#include <stdint.h>

/* out must hold 2*n+1 bytes. */
void	 hex_encode(const uint8_t *, size_t n, char *out);
/* 0-15 for a hexadecimal digit of either case, else -1. */
int	 hex_value(int c);
#endif
