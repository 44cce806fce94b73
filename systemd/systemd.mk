# systemd/systemd.mk: (empty for now)
