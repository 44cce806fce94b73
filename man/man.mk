# man/man.mk: (empty for now)
