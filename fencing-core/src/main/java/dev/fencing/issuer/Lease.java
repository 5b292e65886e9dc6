package dev.fencing.issuer;

import dev.fencing.token.FencingToken;

/**
 * One acquisition of a lock from a {@link TokenIssuer}: the token it produced and whether the lock service still
 * considers it held. A lost lease is exactly the zombie case: its token still exists, and the fence, not the lease,
 * stops its writes.
 */
public interface Lease {

    /** The fencing token of this acquisition; its holder identifies the acquisition. */
    FencingToken token();

    /** Whether the lock service no longer considers this lease held (expired, session lost, or released). */
    boolean isLost();
}
