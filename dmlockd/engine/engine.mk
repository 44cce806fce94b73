# dmlockd/engine/engine.mk: the pure protocol engine (libdmengine.la, links only libc).
noinst_LTLIBRARIES += libdmengine.la
libdmengine_la_SOURCES = \
	dmlockd/engine/dm_types.h dmlockd/engine/dm_types.c \
	dmlockd/engine/dm_engine.h \
	dmlockd/engine/dm_wire.h
