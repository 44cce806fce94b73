/*
 * fuzz_engine.h: the script format of the engine fuzz target
 * (fuzz_engine.c), shared with its seed-corpus generator
 * (gen_engine_corpus.c).  Input: one byte choosing the algorithm (index
 * into dm_algorithm_names(), bit 7 = invitation election), then
 * operations of two bytes, op and arg:
 *   RECEIVE  arg bit 0 = peer n1/n2, arg bits 1-7 = length high bits, one
 *            more byte = length low bits, then that many wire bytes
 *   TICK     time passes by arg ms
 *   ACQUIRE  client arg%8 asks: bit 3 lock a/b, bit 4 shared, bit 5 try,
 *            bit 6 wait 200 ms (else forever)
 *   RELEASE  client arg%8 releases (if holding)
 *   CANCEL   client arg%8 withdraws or gives up
 *   LINK     link to peer bit 0 goes down (bit 1 clear) or up (bit 1 set)
 */
#ifndef FUZZ_ENGINE_H
#define FUZZ_ENGINE_H

enum fz_op {
	FZ_OP_RECEIVE = 0,
	FZ_OP_TICK,
	FZ_OP_ACQUIRE,
	FZ_OP_RELEASE,
	FZ_OP_CANCEL,
	FZ_OP_LINK,
	FZ_OP_COUNT_,
};

/* Operations per input, so one input cannot run for long. */
#define FZ_STEPS_MAX	4096

#endif /* FUZZ_ENGINE_H */
