package dev.fencing.context;

import dev.fencing.token.FencingToken;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether the token of one acquired lock was used while the lock was held: presented to a check (read through
 * {@link FencingContext#present} or {@link FencingSnapshot#present}) or sent to another process by a carrier
 * ({@link FencingSnapshot#markSent}). An acquiring call binds its token with one ({@link FencingContext#bindAcquired},
 * {@link FencingSnapshot#withAcquired}); the binding carries it to other threads and into reactive contexts, so a check
 * there counts too. A call that ends with its token unused wrote nothing a fence checked. Thread-safe.
 *
 * <p>A use {@linkplain #open opened} for a token is also found by a plain {@link FencingContext#bind} of an equal
 * token until it is {@linkplain #close closed}: a token handed to another thread by hand still counts for its lock.
 */
public final class TokenUse {

    /** The uses opened and not yet closed, by token: what a plain bind of an acquired lock's token finds. */
    private static final Map<FencingToken, TokenUse> OPEN = new ConcurrentHashMap<>();

    private final FencingToken token;
    private volatile boolean used;

    /** A use not registered for any token: only the bindings given it carry it. */
    public TokenUse() {
        this(null);
    }

    private TokenUse(FencingToken token) {
        this.token = token;
    }

    /**
     * A use of {@code token}, an acquired lock's, that {@link FencingContext#bind} finds for an equal token until
     * {@link #close()}: open it when the lock is taken and close it when the lock is given back.
     */
    public static TokenUse open(FencingToken token) {
        TokenUse use = new TokenUse(java.util.Objects.requireNonNull(token, "token"));
        OPEN.put(token, use);
        return use;
    }

    /** The open use of a token equal to {@code token}, or {@code null}. */
    static TokenUse of(FencingToken token) {
        return OPEN.isEmpty() ? null : OPEN.get(token);
    }

    /** Stops plain binds from finding this use (the lock was given back); idempotent. */
    public void close() {
        if (token != null) {
            OPEN.remove(token, this);
        }
    }

    /** Records that the token was presented or sent; cheap to call again. */
    public void markUsed() {
        if (!used) {
            used = true;
        }
    }

    /** Whether {@link #markUsed()} was called. */
    public boolean isUsed() {
        return used;
    }
}
