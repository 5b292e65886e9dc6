package dev.fencing.guard;

import dev.fencing.rule.TokenRejectedException;

import java.util.List;

/**
 * Told of each token a {@link FenceGuard} check rejected (stale, duplicate or forged), on the rejecting thread, after
 * the rejection was counted and before it is thrown; never called for an accepted check or any other outcome. For a
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

    /**
     * One listener that tells each of {@code listeners} in order; what one throws is ignored and the next is still
     * told. {@link #NONE} for none, the listener itself for one.
     *
     * @throws NullPointerException when the list or one of its listeners is {@code null}
     */
    static RejectionListener all(List<? extends RejectionListener> listeners) {
        List<RejectionListener> each = List.copyOf(listeners);
        if (each.isEmpty()) {
            return NONE;
        }
        if (each.size() == 1) {
            return each.get(0);
        }
        return rejection -> {
            for (RejectionListener listener : each) {
                try {
                    listener.rejected(rejection);
                } catch (RuntimeException ignored) {
                    // a listener is advisory: the caller gets the rejection either way, and the others are told
                }
            }
        };
    }
}
