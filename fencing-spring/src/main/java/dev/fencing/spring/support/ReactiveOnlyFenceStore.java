package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;

/**
 * The blocking store of an application that has a {@code ReactiveFenceStore} bean and no {@link FenceStore} bean (a
 * WebFlux and R2DBC application): it fences nothing. The startup validator refuses every fenced method that would
 * need it (one that does not return a reactive type), so it is never called in a context that started; if it is
 * called anyway (a fence point first built after startup), it refuses the call and the write does not run.
 */
final class ReactiveOnlyFenceStore implements FenceStore {

    private final String missingStoreMessage;

    ReactiveOnlyFenceStore(String missingStoreMessage) {
        this.missingStoreMessage = missingStoreMessage;
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
        throw new FencingConfigurationException("A blocking @Fenced method was called for resource '" + resource
                + "' (token " + token + "), but this application has only a ReactiveFenceStore, which fences methods "
                + "returning Mono or Flux; the write did not run. " + missingStoreMessage);
    }

    /** The problem of a blocking fenced method in an application without a blocking store. */
    String problem(String operation) {
        return operation + " is @Fenced and does not return a reactive type, but the application has only a "
                + "ReactiveFenceStore (which fences methods returning Mono or Flux) and no FenceStore for it. "
                + missingStoreMessage;
    }
}
