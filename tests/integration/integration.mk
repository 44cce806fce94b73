# tests/integration/integration.mk: (empty for now)
