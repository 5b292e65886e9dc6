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
     * A resource held by {@link #enter}; reentrant, so a write may enter the same resource again (a fenced method
     * calling another) and exit it before its own exit.
     */
    interface Entry {

        /** Releases what {@link #enter} took; call exactly once, on the entering thread. */
        void exit();
    }
}
