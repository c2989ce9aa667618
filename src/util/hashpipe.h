/* hashpipe.h - write + SHA-256 on a worker thread, so a download's bytes are
 * hashed and written while the network thread receives the next ones.
 *
 * Bytes are staged per stream in 1 MiB blocks and queued in order; one worker
 * thread writes each block to the stream's fd and feeds its hash.  The queue
 * is bounded (backpressure: a writer waits while it is full), so memory stays
 * small whatever the file size.  Errors of the worker are kept per stream and
 * returned by the next call on that stream. */
#ifndef OW_HASHPIPE_H
#define OW_HASHPIPE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "digest.h"

typedef struct ow_hashpipe ow_hashpipe;

struct ow_hashpipe_stream {
	int fd;        /* where the bytes go (at its current offset) */
	ow_sha256 *h;  /* what they feed */
	/* first error of the worker on this stream, 0 if none: the worker stores
	 * it (release) after detail, the writer loads it (acquire) before */
	_Atomic int err;
	char *detail;  /* its detail, whole (owned; NULL: none, or out of memory) */
	char *stage;   /* internal: the block being filled */
	size_t staged;
};

/* max_blocks: 1 MiB blocks that may wait in the queue (>= 1). */
int ow_hashpipe_new(ow_hashpipe **out, unsigned max_blocks);
/* Waits for the queue to drain, stops the worker. */
void ow_hashpipe_free(ow_hashpipe *p);
/* Queue bytes of a stream; returns the stream's error (with ow_err set) if
 * the worker failed on it, so the transfer can stop. */
int ow_hashpipe_write(ow_hashpipe *p, struct ow_hashpipe_stream *s, const void *buf, size_t len);
/* Queue the stream's staged bytes and wait until every queued block (of any
 * stream) is written and hashed; then the fd and hash are up to date. */
int ow_hashpipe_flush(ow_hashpipe *p, struct ow_hashpipe_stream *s);
/* Drop the staged bytes of a stream (its queued blocks are flushed first). */
int ow_hashpipe_reset(ow_hashpipe *p, struct ow_hashpipe_stream *s);
/* Free the staging block of a stream that is finished. */
void ow_hashpipe_stream_done(struct ow_hashpipe_stream *s);

#endif
