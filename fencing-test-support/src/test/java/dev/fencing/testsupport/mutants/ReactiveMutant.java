package dev.fencing.testsupport.mutants;

import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import reactor.core.publisher.Flux;

import java.util.concurrent.atomic.AtomicBoolean;

/** A reactive store over the correct in-memory one, with one pitfall. */
final class ReactiveMutant implements ReactiveFenceStore {

    /** One pitfall each. */
    enum Flaw {
        /** Judges (and advances) when the call is assembled, and subscribes the write unchecked later. */
        CHECKS_ON_ASSEMBLY,
        /** Judges the first subscription only: a retry (a second subscription) runs the write unchecked. */
        FIRST_SUBSCRIPTION_ONLY,
        /** Keeps max_seen in the instance, not in the shared data: a new instance (a restart) forgets. */
        PER_INSTANCE
    }

    private final InMemoryReactiveFenceStore delegate;
    private final Flaw flaw;

    /** A mutant over {@code shared}, the data all instances share (the "table"); PER_INSTANCE keeps its own. */
    ReactiveMutant(Flaw flaw, InMemoryReactiveFenceStore shared) {
        this.flaw = flaw;
        this.delegate = flaw == Flaw.PER_INSTANCE ? new InMemoryReactiveFenceStore() : shared;
    }

    @Override
    public <T> Flux<T> fence(String resource, FencingToken token, Flux<T> write) {
        Flux<T> checked = delegate.fence(resource, token, write); // the argument checks, at assembly
        if (flaw == Flaw.CHECKS_ON_ASSEMBLY) {
            try {
                delegate.fence(resource, token, Flux.<T>empty()).blockLast();
            } catch (TokenRejectedException e) {
                return Flux.error(e);
            }
            return write;
        }
        if (flaw == Flaw.PER_INSTANCE) {
            return checked;
        }
        AtomicBoolean judged = new AtomicBoolean();
        return Flux.defer(() -> judged.getAndSet(true) ? write : checked);
    }
}
