/* openapi_doc.h: the API description (openapi.yaml as JSON), embedded in
 * svc-api at build time (openapi_doc.c is made by make from openapi.json). */
#ifndef API_OPENAPI_DOC_H
#define API_OPENAPI_DOC_H

#include <stddef.h>

extern const unsigned char openapi_doc[];
extern const size_t openapi_doc_len;

#endif
