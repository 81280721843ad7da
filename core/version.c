#include "version.h"
const char mncc_version[] = MNCC_VERSION;
