package dev.fencing.reactive;

import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.FenceRule;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link ReactiveFenceStore} in this JVM's memory, the reactive {@link dev.fencing.store.InMemoryFenceStore}: one
 * slot (max_seen, its holder, a queue of turns) per effective resource. Writes to one resource take turns, one at a
 * time in subscription order, without blocking any thread: a subscription waits for its turn asynchronously, the
 * token is judged by {@link FenceRule} when the turn starts, and the turn passes on when the write completes, fails
 * or is cancelled. A write nested in another on the same resource (its context says it holds the turn) runs in that
 * turn. A subscription cancelled while waiting never runs its write and never holds up the next. It protects writes
 * made inside this process only and forgets everything on restart; max_seen stays advanced when the write fails.
 */
public final class InMemoryReactiveFenceStore implements ReactiveFenceStore {

    private final ConcurrentHashMap<String, ResourceTurns> slots = new ConcurrentHashMap<>();
    private final long maxAdvance;

    /** A store without a bound on one advance. */
    public InMemoryReactiveFenceStore() {
        this.maxAdvance = FenceRule.UNBOUNDED;
    }

    /**
     * A store that refuses, as {@link dev.fencing.rule.OutOfRangeTokenException}, a token more than
     * {@code maxAdvance} above a resource's max_seen; a resource's first token is accepted whatever its value.
     *
     * @throws IllegalArgumentException when {@code maxAdvance} is below 1
     */
    public InMemoryReactiveFenceStore(long maxAdvance) {
        this.maxAdvance = FenceRule.checkMaxAdvance("InMemoryReactiveFenceStore", maxAdvance);
    }

    @Override
    public <T> Flux<T> fence(String resource, FencingToken token, Flux<T> write) {
        if (resource == null || write == null) { // refused at assembly: max_seen must not advance for no write
            throw new NullPointerException("InMemoryReactiveFenceStore.fence: " + (resource == null
                    ? "the resource to fence is null" : "the write for resource '" + resource + "' is null")
                    + " (token " + token + "); nothing was checked");
        }
        if (token == null) { // FencingContext.present(..) answers null when nothing is bound: refused, not an NPE
            throw new MissingTokenException(resource, "a check of InMemoryReactiveFenceStore");
        }
        if (!resource.equals(token.resource())) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + token.resource()
                    + "', not for '" + resource + "'");
        }
        return Flux.deferContextual(context -> {
            ResourceTurns slot = slots.computeIfAbsent(resource, unused -> new ResourceTurns());
            if (context.hasKey(slot)) { // nested in a write that holds this resource's turn
                return judged(slot, resource, token, write);
            }
            return Flux.usingWhen(slot.take(),
                    turn -> judged(slot, resource, token, write).contextWrite(c -> c.put(slot, turn)),
                    turn -> Mono.fromRunnable(turn::release),
                    (turn, error) -> Mono.fromRunnable(turn::release),
                    turn -> Mono.fromRunnable(turn::release));
        });
    }

    /** Judges {@code token} now (its turn holds the slot) and, when accepted, advances max_seen and runs the write. */
    private <T> Flux<T> judged(ResourceTurns slot, String resource, FencingToken token, Flux<T> write) {
        Verdict verdict;
        long maxSeen;
        synchronized (slot) {
            maxSeen = slot.maxSeen;
            verdict = FenceRule.judge(slot.seen, slot.maxSeen, slot.holder, token, maxAdvance);
            if (verdict == Verdict.ACCEPT_NEWER) {
                slot.seen = true;
                slot.maxSeen = token.value();
                slot.holder = token.holder();
            }
        }
        if (!verdict.accepted()) {
            return Flux.error(TokenRejectedException.of(resource, token, maxSeen, verdict));
        }
        return write;
    }

    /** The current max_seen of {@code resource}, empty when it never accepted a token. */
    public OptionalLong maxSeen(String resource) {
        ResourceTurns slot = slots.get(resource);
        if (slot == null) {
            return OptionalLong.empty();
        }
        synchronized (slot) {
            return slot.seen ? OptionalLong.of(slot.maxSeen) : OptionalLong.empty();
        }
    }

    /** How many resources this store remembers. */
    public int size() {
        return slots.size();
    }
}
