# check-mutex.awk: the independent checker of the multi-daemon tests.
# Reads a shared log of critical sections, one line per event, in the order
# the events were appended:
#     enter TOKEN NODE ID [TIME]
#     exit  TOKEN NODE ID [TIME]     (the section ended normally)
#     lost  TOKEN NODE ID [TIME]     (the holder was told the lock is lost
#                                     and stopped: also ends the section)
# and fails unless: no section is entered while another is inside (no
# overlap), every exit/lost closes the section that is inside (same ID and
# token), fencing tokens strictly increase from one section to the next,
# and nothing is left inside at the end.  Prints how many sections it
# verified, per node.
# Options (awk -v): want=N  the number of sections that must be verified;
# min_nodes=K  sections must come from at least K distinct nodes.
function bad(msg) {
	printf "check-mutex: %s: line %d: %s\n", FILENAME, NR, msg
	failed = 1
	exit 1
}
BEGIN { inside = ""; last_token = -1; done = 0; lost = 0 }
NF < 4 || NF > 5 || $2 !~ /^[0-9]+$/ { bad("malformed line '" $0 "'") }
$1 == "enter" {
	if (inside != "")
		bad("overlap: " $4 "@" $3 " (token " $2 ") entered while " inside " (token " inside_token ") is inside")
	if ($2 + 0 <= last_token)
		bad("token " $2 " of " $4 "@" $3 " does not increase (previous section had " last_token ")")
	inside = $4 "@" $3; inside_token = $2 + 0; last_token = $2 + 0
	next
}
$1 == "exit" || $1 == "lost" {
	if (inside != $4 "@" $3 || inside_token != $2 + 0)
		bad($1 " of " $4 "@" $3 " (token " $2 ") while " (inside == "" ? "nobody" : inside " (token " inside_token ")") " is inside")
	inside = ""; done++; per_node[$3]++
	if ($1 == "lost") lost++
	next
}
{ bad("unknown event '" $1 "'") }
END {
	if (failed) exit 1
	if (inside != "") { printf "check-mutex: %s: %s never left\n", FILENAME, inside; exit 1 }
	nodes = 0; list = ""
	for (n in per_node) { nodes++; list = list " " n "=" per_node[n] }
	if (want != "" && done != want + 0) {
		printf "check-mutex: %s: %d critical sections, expected %d\n", FILENAME, done, want; exit 1
	}
	if (min_nodes != "" && nodes < min_nodes + 0) {
		printf "check-mutex: %s: sections from %d node(s), expected at least %d\n", FILENAME, nodes, min_nodes; exit 1
	}
	printf "check-mutex: verified %d critical sections (%d ended by lost), no overlap, tokens strictly increasing; per node:%s\n", done, lost, list
}
