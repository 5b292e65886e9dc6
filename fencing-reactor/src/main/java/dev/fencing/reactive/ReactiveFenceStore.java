package dev.fencing.reactive;

import dev.fencing.token.FencingToken;
import reactor.core.publisher.Flux;

/**
 * The reactive form of {@link dev.fencing.store.FenceStore}: where a resource remembers max_seen and enforces
 * {@link dev.fencing.rule.FenceRule} for writes that happen when a publisher is subscribed. On each subscription the
 * returned publisher checks the token and advances max_seen, then subscribes to the write, in one atomic unit per
 * resource (the caller's reactive transaction for a database, a per-resource turn in memory): once a write with token
 * 34 has been accepted, a write checked earlier with 33 must not be applied after it. Nothing happens until it is
 * subscribed, and no implementation blocks the subscribing thread.
 */
public interface ReactiveFenceStore {

    /**
     * A publisher that, on each subscription, checks {@code token} against max_seen of {@code resource} and, when
     * accepted, advances max_seen and subscribes to {@code write} inside the same atomic unit, relaying its signals.
     *
     * @param resource the effective resource; must equal {@code token.resource()}
     * @param token    the presented token
     * @param write    the guarded write, subscribed at most once per subscription and only when the token is accepted
     * @return signals {@link dev.fencing.rule.TokenRejectedException} (created by this store, carrying this very
     * {@code token}) when rejected, with {@code write} not subscribed and nothing changed;
     * {@link dev.fencing.store.FenceStoreException} (carrying this very {@code token}) when the store cannot reach
     * a verdict; otherwise whatever {@code write} signals, unchanged
     * @throws IllegalArgumentException when the token was issued for another resource (at assembly)
     * @throws dev.fencing.context.MissingTokenException when {@code token} is {@code null} (at assembly)
     * @throws NullPointerException     when {@code resource} or {@code write} is {@code null} (at assembly, naming the
     *                                  other arguments; nothing changed)
     */
    <T> Flux<T> fence(String resource, FencingToken token, Flux<T> write);

    /**
     * Checks that this store can fence every resource the library accepts (for a database: that its table exists
     * with the columns, types and keys the check needs). Called once at startup, off any event loop; it may block.
     * Idempotent; the default checks nothing.
     *
     * @throws dev.fencing.FencingConfigurationException saying what is wrong and how to fix it
     */
    default void verify() {
    }
}
