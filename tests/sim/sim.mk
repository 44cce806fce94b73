# tests/sim/sim.mk: (empty for now)
