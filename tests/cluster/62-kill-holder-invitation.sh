#!/bin/bash
# 62-kill-holder-invitation: 61-kill-holder-algorithms again with
# `election = invitation`, for the algorithms that use an election (the
# three token algorithms and the hierarchical scheme): SIGKILL of the
# token holder / coordinator node1 while node2 waits, recovery with a
# larger fencing token after the lease, both survivors naming the same
# new coordinator, then the mutual-exclusion checker on the survivors.
CLUSTER_ELECTION=invitation
KILL_ALGORITHMS=${KILL_ALGORITHMS:-"suzuki-kasami raymond naimi-trehel hierarchical"}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/61-kill-holder-algorithms.sh"
