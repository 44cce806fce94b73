# libdmlock/libdmlock.mk: (empty for now)
