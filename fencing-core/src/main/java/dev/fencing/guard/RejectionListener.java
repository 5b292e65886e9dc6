package dev.fencing.guard;

import dev.fencing.rule.TokenRejectedException;

/**
 * Told of each token a {@link FenceGuard} check rejected (stale, duplicate or forged), on the rejecting thread, after the
 * rejection was counted and before it is thrown; never called for an accepted check or any other outcome. For a
 * record of recent rejections (the Spring Boot actuator endpoint keeps one); must be quick, and anything it throws is
 * ignored: the caller gets the rejection either way.
 */
@FunctionalInterface
public interface RejectionListener {

    /** A listener that does nothing. */
    RejectionListener NONE = rejection -> {
    };

    /** {@code rejection} names the resource, the presented token, max_seen, the verdict and the fenced operation. */
    void rejected(TokenRejectedException rejection);
}
