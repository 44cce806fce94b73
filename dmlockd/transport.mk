# dmlockd/transport.mk: (empty for now)
