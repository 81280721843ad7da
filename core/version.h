#ifndef MN_VERSION_H
#define MN_VERSION_H
#define MNCC_VERSION "0.1.0"
extern const char mncc_version[];
#endif
