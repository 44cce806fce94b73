# conf/conf.mk: (empty for now)
