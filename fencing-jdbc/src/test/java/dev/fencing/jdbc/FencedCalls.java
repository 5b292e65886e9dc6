package dev.fencing.jdbc;

import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;

/** Tests' fenced calls whose body throws nothing checked: what the store throws comes back unchecked. */
final class FencedCalls {

    private FencedCalls() {
    }

    /** {@code body} fenced by {@code store} with {@code token}; a checked exception comes back wrapped. */
    static void fence(FenceStore store, String resource, FencingToken token, Runnable body) {
        try {
            store.fence(resource, token, () -> {
                body.run();
                return null;
            });
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
