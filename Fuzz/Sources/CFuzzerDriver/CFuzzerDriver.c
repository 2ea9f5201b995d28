// The declaration in include/CFuzzerDriver.h is the whole module; a C target needs one source.
#include "CFuzzerDriver.h"
