package dev.fencing.context;

import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * Whether the token of one acquired lock was used while the lock was held: presented to a check (read through
 * {@link FencingContext#present} or {@link FencingSnapshot#present}) or sent to another process by a carrier
 * ({@link FencingSnapshot#markSent}). An acquiring call binds its token with one ({@link FencingContext#bindAcquired},
 * {@link FencingSnapshot#withAcquired}); the binding carries it to other threads and into reactive contexts, so a check
 * there counts too. A call that ends with its token unused wrote nothing a fence checked. Thread-safe.
 *
 * <p>A use {@linkplain #open opened} for a token is also found by a plain {@link FencingContext#bind} of an equal
 * token until it is {@linkplain #close closed}: a token handed to another thread by hand still counts for its lock.
 * It also records the acquiring calls that ran under the lock ({@link #ranUnder}), the outermost and the nested ones,
 * so that a report names them all. Opened with the lease's {@code isLost}, it refuses a check once the lock is known
 * lost ({@code StaleTokenException.lockLost()}), through every binding that carries it.
 */
public final class TokenUse {

    /** The uses opened and not yet closed, by token: what a plain bind of an acquired lock's token finds. */
    private static final Map<FencingToken, TokenUse> OPEN = new ConcurrentHashMap<>();

    private final FencingToken token;
    /** The thread that opened it (took the lock), or {@code null} for a use not registered. */
    private final Thread opener;
    /** Whether the lock is known lost now ({@code Lease::isLost}), or {@code null}: never known lost. */
    private final BooleanSupplier lockLost;
    /**
     * The tokens and uses of the acquired locks whose bindings were visible on the opening thread when it opened this
     * one ({@link #openNested}): the acquiring calls it runs inside. {@code null} for none (every other use).
     */
    private final FencingToken[] enclosingTokens;
    private final TokenUse[] enclosingUses;
    private volatile boolean used;
    /** Guarded by this. */
    private final List<Object> callers = new ArrayList<>(1);

    /** A use not registered for any token: only the bindings given it carry it. */
    public TokenUse() {
        this(null, null);
    }

    private TokenUse(FencingToken token, BooleanSupplier lockLost) {
        this(token, lockLost, null, null);
    }

    private TokenUse(FencingToken token, BooleanSupplier lockLost, FencingToken[] enclosingTokens,
                     TokenUse[] enclosingUses) {
        this.token = token;
        this.opener = token == null ? null : Thread.currentThread();
        this.lockLost = lockLost;
        this.enclosingTokens = enclosingTokens;
        this.enclosingUses = enclosingUses;
    }

    /**
     * A use of {@code token}, an acquired lock's, that {@link FencingContext#bind} finds for an equal token until
     * {@link #close()}: open it when the lock is taken and close it when the lock is given back.
     */
    public static TokenUse open(FencingToken token) {
        return open(token, null);
    }

    /**
     * {@link #open(FencingToken)}, with what tells whether the lock is lost ({@code lease::isLost}): from then on a
     * check that presents the token through any binding carrying this use is refused
     * ({@code StaleTokenException.lockLost}) before a store sees it.
     */
    public static TokenUse open(FencingToken token, BooleanSupplier lockLost) {
        TokenUse use = new TokenUse(java.util.Objects.requireNonNull(token, "token"), lockLost);
        // an equal token's lock is open already (an issuer that hands a re-entrant acquire the same token): that one
        // stays what plain binds find, and this one's close cannot unregister it
        return OPEN.putIfAbsent(token, use) == null ? use : new TokenUse(null, lockLost);
    }

    /**
     * {@link #open(FencingToken, BooleanSupplier)} for a lock taken inside other acquiring calls: the acquired locks
     * whose bindings are visible on this thread now ({@link FencingContext#bindAcquired}, or a plain bind or a
     * propagated snapshot carrying such a lock's use). From then on a check presenting {@code token} is refused
     * before a store sees it also once any of those is known lost or given back
     * ({@link StaleTokenException#enclosingLockLost}): work nested in a lost lock stops, even under a lock of its own
     * that is still held. Looks at this thread's bindings once, here; with none visible, it is
     * {@link #open(FencingToken, BooleanSupplier)}.
     */
    public static TokenUse openNested(FencingToken token, BooleanSupplier lockLost) {
        java.util.Objects.requireNonNull(token, "token");
        List<FencingToken> tokens = new ArrayList<>(2);
        List<TokenUse> uses = new ArrayList<>(2);
        FencingContext.acquiredInView(tokens, uses);
        if (uses.isEmpty()) {
            return open(token, lockLost);
        }
        FencingToken[] around = tokens.toArray(FencingToken[]::new);
        TokenUse[] aroundUses = uses.toArray(TokenUse[]::new);
        TokenUse use = new TokenUse(token, lockLost, around, aroundUses);
        return OPEN.putIfAbsent(token, use) == null ? use : new TokenUse(null, lockLost, around, aroundUses);
    }

    /**
     * Marks the use as {@link #markUsed()} does, for a check presenting {@code presented}.
     *
     * @throws StaleTokenException ({@link StaleTokenException#lockLost()}) when the lock is known lost, or a lock it
     *                             was taken inside ({@link #openNested}) is: the check must not reach a store
     */
    void presentedFor(FencingToken presented) {
        markUsed();
        if (lostNow()) {
            throw StaleTokenException.lockLost(presented.resource(), presented, null);
        }
        if (enclosingUses != null) { // a lock taken inside others (openNested): only then is there more to ask
            FencingToken around = lostAround();
            if (around != null) {
                throw StaleTokenException.enclosingLockLost(presented.resource(), presented, around, null);
            }
        }
    }

    /** Whether this use's own lock is known lost or given back now; a lock that cannot tell counts as lost. */
    boolean lostNow() {
        try {
            return lockLost != null && lockLost.getAsBoolean();
        } catch (RuntimeException e) {
            return true; // cannot tell whether the lock is held: refused, fail closed
        }
    }

    /** The token of a lock this one was taken inside ({@link #openNested}) that is lost now, or {@code null}. */
    FencingToken lostAround() {
        TokenUse[] around = enclosingUses;
        if (around != null) {
            for (int i = 0; i < around.length; i++) {
                if (around[i].lostNow()) {
                    return enclosingTokens[i];
                }
            }
        }
        return null;
    }

    /** Adds this use (bound with {@code bound}) and the uses it was opened inside to the lists, each use once. */
    void addWithEnclosing(FencingToken bound, List<FencingToken> tokens, List<TokenUse> uses) {
        addOnce(bound, this, tokens, uses);
        if (enclosingUses != null) {
            for (int i = 0; i < enclosingUses.length; i++) {
                addOnce(enclosingTokens[i], enclosingUses[i], tokens, uses);
            }
        }
    }

    private static void addOnce(FencingToken token, TokenUse use, List<FencingToken> tokens, List<TokenUse> uses) {
        for (TokenUse known : uses) {
            if (known == use) {
                return;
            }
        }
        tokens.add(token);
        uses.add(use);
    }

    /**
     * Whether this use stands for a lock this process took ({@link #open(FencingToken, BooleanSupplier)} was told how
     * to know it lost): not a remote token's use, nor one opened without a way to tell.
     */
    boolean knowsLoss() {
        return lockLost != null;
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

    /**
     * Whether this use is {@linkplain #open open} (its lock not given back yet) and was opened on {@code thread}: the
     * thread that took the lock and holds it, not one the token was propagated to.
     */
    public boolean isOpenOn(Thread thread) {
        return opener == thread && token != null && OPEN.get(token) == this;
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

    /**
     * Records that an acquiring call, {@code caller} (the guard passes its fence point), ran under this lock and
     * returned: the lock's own acquiring call or one nested in it that found the lock held. Each caller once.
     */
    public synchronized void ranUnder(Object caller) {
        java.util.Objects.requireNonNull(caller, "caller");
        if (!callers.contains(caller)) {
            callers.add(caller);
        }
    }

    /** The callers {@link #ranUnder} recorded, in the order they first returned. */
    public synchronized List<Object> callers() {
        return List.copyOf(callers);
    }
}
