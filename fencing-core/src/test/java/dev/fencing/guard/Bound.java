package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;

final class Bound {
    private Bound() {
    }

    /** Calls {@code call} with {@code token} bound, letting any throwable through. */
    static <T> T bound(FencingToken token, FencedCall<T> call) throws Throwable {
        try (FencingScope ignored = FencingContext.bind(token)) {
            return call.proceed();
        }
    }
}
