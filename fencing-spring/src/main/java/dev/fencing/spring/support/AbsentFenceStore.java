package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;

import java.util.function.Supplier;

/**
 * Stands for the blocking {@link FenceStore} of an application whose fenced methods are all reactive, which needs
 * none (a WebFlux application on R2DBC has no {@code DataSource}): it refuses every blocking check with the failure of
 * the store's lookup (fail closed), and {@link FencingSupport#verifyStore()} raises that failure at startup as soon as
 * a blocking fence point exists. Used only when the reactive fence could be built, so an application with neither
 * store still fails as before.
 */
final class AbsentFenceStore implements FenceStore {

    private final FencingConfigurationException missing;

    private AbsentFenceStore(FencingConfigurationException missing) {
        this.missing = missing;
    }

    /**
     * This store standing for the missing one when {@code reactive} builds (a reactive store is declared); otherwise
     * {@code missing} is thrown, as without reactive methods.
     */
    static FenceStore unlessReactive(FencingConfigurationException missing, Supplier<?> reactive) {
        try {
            reactive.get();
        } catch (FencingConfigurationException noReactiveStore) {
            throw missing;
        }
        return new AbsentFenceStore(missing);
    }

    /**
     * The lookup's failure for the blocking fence point {@code operation}: a new exception naming it, with the
     * lookup's message and the lookup's exception as cause.
     */
    FencingConfigurationException failure(String operation) {
        return new FencingConfigurationException("@Fenced on " + operation + " is a blocking fence point, checked by "
                + "a FenceStore (the reactive store checks only methods returning a reactive type), and "
                + missing.getMessage(), missing);
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
        throw failure("resource '" + resource + "'");
    }
}
