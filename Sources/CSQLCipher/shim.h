#ifndef CSQLCIPHER_SHIM_H
#define CSQLCIPHER_SHIM_H

// sqlite3_key / sqlite3_rekey are declared only when SQLITE_HAS_CODEC is defined, and the
// Debian sqlcipher.pc does not define it. The guard keeps this correct if a .pc file ever does.
#ifndef SQLITE_HAS_CODEC
#define SQLITE_HAS_CODEC 1
#endif

// The SQLCipher header, never <sqlite3.h>: libsqlite3-dev may install a plain one beside it.
#include <sqlcipher/sqlite3.h>

// SQLITE_TRANSIENT is a function-pointer cast macro that Swift does not import.
static inline sqlite3_destructor_type csqlcipher_transient(void) { return SQLITE_TRANSIENT; }

#endif
