#ifndef CONFIG_H
#define CONFIG_H
#define HELPER_VALUE 40
#ifdef LEGACY
#warning "config.h: LEGACY is deprecated"
#endif
#endif
