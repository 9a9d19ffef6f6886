#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H
#include <microhttpd.h>
#endif
