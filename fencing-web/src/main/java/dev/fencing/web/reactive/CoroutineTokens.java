package dev.fencing.web.reactive;

import dev.fencing.context.FencingSnapshot;
import dev.fencing.reactive.ReactiveFencing;
import kotlin.coroutines.CoroutineContext;
import kotlinx.coroutines.reactor.ReactorContext;
import org.springframework.web.reactive.function.client.CoExchangeFilterFunction;
import reactor.util.context.ContextView;

/**
 * The tokens of the Kotlin coroutine that made a {@code WebClient} request through Spring's coroutine extensions
 * ({@code awaitBody}, {@code awaitExchange}, ...). Those build the request's context from the coroutine's Reactor
 * context with the awaiting thread's context-propagation values put over it; the fencing entry of a thread with no
 * token bound is an empty snapshot, which hides the coroutine's tokens. Spring keeps the coroutine's context under
 * {@link CoExchangeFilterFunction#COROUTINE_CONTEXT_ATTRIBUTE}: its Reactor context's tokens are the coroutine's own,
 * not another thread's leftovers. Loaded only when kotlinx-coroutines-reactor is on the class path
 * ({@link FencingTokenExchangeFilterFunction} asks first).
 */
final class CoroutineTokens {

    private CoroutineTokens() {
    }

    /**
     * The tokens of the coroutine whose request has {@code context}, when the context's own entry, {@code empty}, is
     * empty; {@code empty} when the request was not made by a coroutine or its Reactor context has none either.
     */
    static FencingSnapshot of(ContextView context, FencingSnapshot empty) {
        Object coroutine = context.getOrDefault(CoExchangeFilterFunction.COROUTINE_CONTEXT_ATTRIBUTE, null);
        if (!(coroutine instanceof CoroutineContext coroutineContext)) {
            return empty;
        }
        ReactorContext reactor = coroutineContext.get(ReactorContext.Key);
        if (reactor == null) {
            return empty;
        }
        FencingSnapshot own = ReactiveFencing.tokens(reactor.getContext());
        return own.values().isEmpty() ? empty : own;
    }
}
