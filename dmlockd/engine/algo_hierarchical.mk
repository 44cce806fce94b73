# dmlockd/engine/algo_hierarchical.mk: the hierarchical group/system
# coordinator algorithm (Bisque 1992, ch. 6) and the invitation election,
# with unit tests and the simulator sweep (see NOTES-hierarchical.md).
libdmengine_la_SOURCES += \
	dmlockd/engine/algo_hierarchical.h \
	dmlockd/engine/algo_hierarchical.c \
	dmlockd/engine/algo_hierarchical_coord.c \
	dmlockd/engine/dm_election_invitation.c
EXTRA_DIST += dmlockd/engine/NOTES-hierarchical.md
