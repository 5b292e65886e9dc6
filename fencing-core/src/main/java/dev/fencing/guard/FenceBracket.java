package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;

/**
 * Internal: public for the proxy interceptor (fencing-spring) and the woven aspect (fencing-aspect), not for
 * applications.
 * The fence of one checking {@link FencePoint} as a bracket around a body its caller runs itself, for a
 * {@link BracketFenceStore}: {@link #token()} (or {@link #token(Object[])} for a point with a key),
 * {@link #enter(FencingToken)}, the body, then {@link #exit} or {@link #failed}. It counts, names and reports every
 * outcome exactly as {@link FenceGuard#invoke} does (through {@link CheckOutcomes}), and an unkeyed point's accepted
 * call allocates nothing. Created once per point by {@link FenceGuard#bracket(FencePoint)}; thread-safe.
 *
 * <p>The protocol, which the caller must keep (the resource stays held otherwise):
 * <pre>{@code
 * if (!bracket.enforcing()) {                          // the point's resource is in observe mode now
 *     return guard.invoke(...);                       // the callback path judges, counts and lets the call run
 * }
 * FencingToken token = bracket.token(args);           // throws when the key is invalid, none is bound, or forged
 * BracketFenceStore.Entry entry = bracket.enter(token); // throws when rejected; nothing is held then
 * Object result;
 * try {
 *     result = body();
 * } catch (Throwable t) {
 *     throw bracket.failed(entry, token, t);           // releases, counts, returns t
 * }
 * bracket.exit(entry);                                 // releases, counts accepted
 * return result;
 * }</pre>
 */
public abstract sealed class FenceBracket permits FenceBracket.Unkeyed, FenceBracket.Keyed {

    final FencePoint point;
    final String resource;
    final RejectionListener rejections;
    final TokenVerifier verifier;
    final FenceModes modes;
    /** The point's {@code accepted} counter ({@link FencePoint#checks()}), counted by {@link #exit}. */
    private final Counter accepted;

    /**
     * The bracket of {@code point}: an {@link Unkeyed} or a {@link Keyed} one. Two classes, so that a caller's call of
     * {@link #enter} or {@link #token(Object[])} sees each kind's own code: the JIT inlines the unkeyed path, which is
     * small, where one method holding both paths compiled too big to be inlined.
     *
     * @throws IllegalArgumentException when the point acquires
     */
    static FenceBracket of(FencePoint point, BracketFenceStore store, RejectionListener rejections,
                           TokenVerifier verifier, FenceModes modes) {
        return point.hasKey() ? new Keyed(point, store, rejections, verifier, modes)
                : new Unkeyed(point, store, rejections, verifier, modes);
    }

    private FenceBracket(FencePoint point, RejectionListener rejections, TokenVerifier verifier, FenceModes modes) {
        if (point.acquire()) {
            throw new IllegalArgumentException("A bracket fences a checking point only, not " + point);
        }
        this.point = point;
        this.resource = point.resource();
        this.rejections = rejections;
        this.verifier = verifier;
        this.modes = modes;
        this.accepted = point.checks().accepted();
    }

    /**
     * Whether the point's resource is enforced now: read on every call (one volatile read), so a mode switched at
     * runtime reaches a bracket cached per point. When {@code false} the caller must fence the call through
     * {@link FenceGuard#invoke} instead, which observes; the methods below always enforce (fail closed).
     */
    public final boolean enforcing() {
        return !modes.observes(resource);
    }

    /** The point this bracket fences. */
    public final FencePoint point() {
        return point;
    }

    /**
     * The token bound for the resource of an unkeyed point, verified when the guard has a verifier.
     *
     * @throws MissingTokenException                 when none is bound (counted {@code missing})
     * @throws dev.fencing.rule.ForgedTokenException when it fails verification (counted {@code forged}, reported)
     * @throws IllegalStateException                 when the point has a key: use {@link #token(Object[])}
     */
    public final FencingToken token() {
        if (point.hasKey()) {
            throw new IllegalStateException(point + " has a key: its token depends on the call's arguments");
        }
        FencingToken token;
        try {
            // not through bound(key): its keyed lookup, compiled into it, made it too big for the JIT to inline
            token = FencingContext.present(resource);
        } catch (StaleTokenException lost) {
            throw CheckOutcomes.lockLost(point, lost, rejections, null);
        }
        CheckOutcomes.presented(point, resource, token, verifier, rejections, null);
        return token;
    }

    /**
     * The token bound for the effective resource of a call with {@code args} (the point's resource for an unkeyed
     * point, which never reads them), verified when the guard has a verifier.
     *
     * @throws InvalidKeyException                   when the key cannot be computed or has no stable text (counted
     *                                               {@code invalid})
     * @throws MissingTokenException                 when none is bound (counted {@code missing})
     * @throws dev.fencing.rule.ForgedTokenException when it fails verification (counted {@code forged}, reported)
     */
    public abstract FencingToken token(Object[] args);

    /**
     * {@link #token(Object[])} for a call of {@code count} (at most three) arguments given one by one, those past
     * {@code count} {@code null}: when the key reads one argument alone no array is built, so a caller that has the
     * arguments apart (the woven aspect binds them) allocates nothing for them.
     *
     * @throws IllegalArgumentException when {@code count} is not 0 to 3
     * @throws InvalidKeyException      as {@link #token(Object[])}
     * @throws MissingTokenException    as {@link #token(Object[])}
     */
    public final FencingToken token(int count, Object a0, Object a1, Object a2) {
        if (count < 0 || count > 3) {
            throw new IllegalArgumentException("A call of 0 to 3 arguments, not " + count + ", for " + point);
        }
        return token(count, a0, a1, a2, null, null, null);
    }

    /**
     * {@link #token(int, Object, Object, Object)} for a call of up to six arguments: the woven aspect binds the
     * arguments of keyed methods of four to six parameters too.
     *
     * @throws IllegalArgumentException when {@code count} is not 0 to 6
     * @throws InvalidKeyException      as {@link #token(Object[])}
     * @throws MissingTokenException    as {@link #token(Object[])}
     */
    public final FencingToken token(int count, Object a0, Object a1, Object a2, Object a3, Object a4, Object a5) {
        if (count < 0 || count > 6) {
            throw new IllegalArgumentException("A call of 0 to 6 arguments, not " + count + ", for " + point);
        }
        int at = point.keyArgument();
        if (at < 0 || at >= count) {
            return token(arguments(count, a0, a1, a2, a3, a4, a5));
        }
        Object key;
        try {
            key = point.keyOfArgument(argument(at, a0, a1, a2, a3, a4, a5));
        } catch (RuntimeException e) {
            throw CheckOutcomes.invalidKey(point, e);
        }
        return presented(key);
    }

    /** The call's first {@code count} arguments as one array of that length (a key reading several needs them). */
    private static Object[] arguments(int count, Object a0, Object a1, Object a2, Object a3, Object a4, Object a5) {
        Object[] args = new Object[count];
        for (int i = 0; i < count; i++) {
            args[i] = argument(i, a0, a1, a2, a3, a4, a5);
        }
        return args;
    }

    private static Object argument(int at, Object a0, Object a1, Object a2, Object a3, Object a4, Object a5) {
        return switch (at) {
            case 0 -> a0;
            case 1 -> a1;
            case 2 -> a2;
            case 3 -> a3;
            case 4 -> a4;
            default -> a5;
        };
    }

    /**
     * The token bound for {@code key} ({@code null}: the unkeyed resource), as a check presents it; a token whose lock
     * is known lost here is refused, counted {@code stale}.
     */
    final FencingToken bound(Object key) {
        try {
            return point.present(key);
        } catch (StaleTokenException lost) {
            throw CheckOutcomes.lockLost(point, lost, rejections, null);
        }
    }

    /** The token bound for the effective resource of a checked {@code key}, verified and counted as presented. */
    final FencingToken presented(Object key) {
        FencingToken token = bound(key);
        // the effective resource's text is built only for the message of a missing token
        String effective = token != null ? token.resource() : CheckOutcomes.resourceOf(point, key);
        CheckOutcomes.presented(point, effective, token, verifier, rejections, null);
        return token;
    }

    /**
     * Checks {@code token} in the store and holds the resource; on failure nothing is held and the failure is
     * counted as {@link FenceGuard#invoke} counts a failure before the write started.
     *
     * @throws dev.fencing.rule.TokenRejectedException when rejected (named after the point's operation, reported)
     * @throws dev.fencing.store.FenceStoreException   when the store failed without a verdict
     */
    public abstract BracketFenceStore.Entry enter(FencingToken token);

    /** Counts and returns what to throw when entering for the (effective) {@code resource} failed with {@code t}. */
    final RuntimeException enterFailed(String effective, FencingToken token, Throwable t) {
        Throwable failure = CheckOutcomes.failed(point, effective, token, false, t, rejections, null);
        if (failure instanceof RuntimeException unchecked) {
            return unchecked;
        }
        throw (Error) failure; // an unchecked failure is returned as itself or as a FencingException
    }

    /** Ends an accepted call whose body returned: releases the resource, then counts {@code accepted}. */
    public final void exit(BracketFenceStore.Entry entry) {
        entry.exit();
        FencingMetrics.increment(accepted); // as CheckOutcomes.accepted(point, null) counts it
    }

    /**
     * Ends an accepted call whose body threw {@code t}: releases the resource, counts as {@link FenceGuard#invoke}
     * counts a failure once the write started (the body's own, so {@code accepted}), and returns what to throw.
     */
    public final Throwable failed(BracketFenceStore.Entry entry, FencingToken token, Throwable t) {
        try {
            entry.exit();
        } catch (RuntimeException e) {
            t.addSuppressed(e);
        }
        return CheckOutcomes.failed(point, token.resource(), token, true, t, rejections, null);
    }

    @Override
    public final String toString() {
        return "FenceBracket[" + point + "]";
    }

    /**
     * The bracket of a point without a key: one resource, entered through the store's lane, which may keep its slot.
     */
    static final class Unkeyed extends FenceBracket {
        /** The store's way into the point's resource (it may keep the resource's slot). */
        private final BracketFenceStore.Lane lane;

        Unkeyed(FencePoint point, BracketFenceStore store, RejectionListener rejections, TokenVerifier verifier,
                FenceModes modes) {
            super(point, rejections, verifier, modes);
            this.lane = store.lane(resource);
        }

        @Override
        public FencingToken token(Object[] args) {
            return token();
        }

        @Override
        public BracketFenceStore.Entry enter(FencingToken token) {
            String effective = token.resource();
            try {
                return lane.enter(token);
            } catch (RuntimeException | Error t) {
                throw enterFailed(effective, token, t);
            }
        }
    }

    /** The bracket of a point with a key: each call's effective resource, entered in the store by its name. */
    static final class Keyed extends FenceBracket {
        /** The store, entered by each call's effective resource. */
        private final BracketFenceStore store;

        Keyed(FencePoint point, BracketFenceStore store, RejectionListener rejections, TokenVerifier verifier,
              FenceModes modes) {
            super(point, rejections, verifier, modes);
            this.store = store;
        }

        @Override
        public FencingToken token(Object[] args) {
            Object key;
            try {
                key = point.keyOf(args);
            } catch (RuntimeException e) {
                throw CheckOutcomes.invalidKey(point, e);
            }
            return presented(key);
        }

        @Override
        public BracketFenceStore.Entry enter(FencingToken token) {
            // the token's own instance of the effective resource's text: its hash is cached, and the store compares
            // resource and token by reference
            String effective = token.resource();
            try {
                return store.enter(effective, token);
            } catch (RuntimeException | Error t) {
                throw enterFailed(effective, token, t);
            }
        }
    }
}
