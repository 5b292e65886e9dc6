package dev.fencing.store;

import dev.fencing.token.FencingToken;

/**
 * A {@link FenceStore} that can also fence a write it does not run itself: {@link #enter} checks the token, advances
 * max_seen and takes whatever serializes the resource's writes, the caller runs the write on the same thread, then
 * calls {@link Entry#exit()} exactly once, whatever the write's outcome. Internal: implemented by
 * {@link InMemoryFenceStore} for the woven aspect, whose body cannot be handed over as a callback without allocating
 * one, and the proxy interceptor, which runs the target from its own frame; a store that needs to run the write inside
 * its own unit of work (a database transaction) offers only {@link #fence}.
 */
public interface BracketFenceStore extends FenceStore {

    /**
     * Checks {@code token} against max_seen of {@code resource} and, when accepted, advances max_seen and holds the
     * resource for the calling thread until {@link Entry#exit()}; the same rule and the same exceptions as
     * {@link #fence}, and nothing is held when it throws.
     *
     * @param resource the effective resource; must equal {@code token.resource()}
     * @param token    the presented token
     * @return what the caller must exit, on this thread, once the write is over
     * @throws dev.fencing.rule.TokenRejectedException when rejected (carrying this very {@code token}); nothing changed
     * @throws IllegalArgumentException                when the token was issued for another resource
     */
    Entry enter(String resource, FencingToken token);

    /**
     * The way into one fixed resource, for a caller that enters the same resource on every call (an unkeyed fence
     * point): {@link Lane#enter} is {@link #enter} with that resource, and may keep what it looked up (the in-memory
     * store keeps the resource's slot, checked on every call for having been folded). This default keeps nothing.
     *
     * @param resource the resource every call of the lane enters
     */
    default Lane lane(String resource) {
        java.util.Objects.requireNonNull(resource, "resource");
        return token -> enter(resource, token);
    }

    /** {@link #enter} for one resource; thread-safe. */
    interface Lane {

        /**
         * {@link BracketFenceStore#enter} with the lane's resource: the same rule, exceptions and obligation to exit.
         *
         * @throws IllegalArgumentException when the token was issued for another resource
         */
        Entry enter(FencingToken token);
    }

    /**
     * A resource held by {@link #enter}; reentrant, so a write may enter the same resource again (a fenced method
     * calling another) and exit it before its own exit.
     */
    interface Entry {

        /** Releases what {@link #enter} took; call exactly once, on the entering thread. */
        void exit();
    }
}
