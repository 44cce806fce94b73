# dmlockd/dmlockd.mk: the daemon's I/O shells and main().
noinst_LTLIBRARIES += libdmshell.la
libdmshell_la_SOURCES = dmlockd/log.h dmlockd/log.c
libdmshell_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(SYSTEMD_CFLAGS)
libdmshell_la_LIBADD = $(LIBEVENT_LIBS) $(SYSTEMD_LIBS)
