#!/bin/bash
# 22-freeze-rejoin: 21-freeze-holder-node, then the node resumed after
# SIGCONT learns it was removed, rejoins, and all three nodes serve again.
FREEZE_REJOIN=1 exec bash "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/21-freeze-holder-node.sh"
