#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>

// PG_DIAG_* are character macros, which Swift does not import; re-export them as constants.
static const int CLibPQ_DIAG_SQLSTATE = PG_DIAG_SQLSTATE;
static const int CLibPQ_DIAG_MESSAGE_PRIMARY = PG_DIAG_MESSAGE_PRIMARY;
static const int CLibPQ_DIAG_MESSAGE_DETAIL = PG_DIAG_MESSAGE_DETAIL;
static const int CLibPQ_DIAG_MESSAGE_HINT = PG_DIAG_MESSAGE_HINT;
static const int CLibPQ_DIAG_CONTEXT = PG_DIAG_CONTEXT;
static const int CLibPQ_DIAG_CONSTRAINT_NAME = PG_DIAG_CONSTRAINT_NAME;

#endif
