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
        FIRST_SUBSCRIPTION_ONLY
    }

    private final InMemoryReactiveFenceStore delegate = new InMemoryReactiveFenceStore();
    private final Flaw flaw;

    ReactiveMutant(Flaw flaw) {
        this.flaw = flaw;
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
        AtomicBoolean judged = new AtomicBoolean();
        return Flux.defer(() -> judged.getAndSet(true) ? write : checked);
    }
}
