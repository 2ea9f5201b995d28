#ifndef CTSS2_SHIM_H
#define CTSS2_SHIM_H

/* Debian's tpm2-tss (libtss2-dev): the Enhanced System API, the TCTI loader that turns a
   configuration string into a connection, and the return-code decoder. */
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_rc.h>

#endif
