package dev.fencing.reactive;

import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.FencingThreadLocalAccessor;
import dev.fencing.context.TokenUse;
import dev.fencing.token.FencingToken;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Tokens in the Reactor {@link Context}: what reactive fenced methods check and what reactive clients carry. The
 * tokens live under {@link #CONTEXT_KEY} as a {@link FencingSnapshot}, the same key and value the thread-bound
 * context travels under in Micrometer's context-propagation, so with Reactor's automatic context propagation a
 * blocking fenced call inside an operator sees them too. Write them with
 * {@code contextWrite(ReactiveFencing.bind(token))}; as everywhere in Reactor, a context written downstream is visible
 * upstream.
 */
public final class ReactiveFencing {

    /** The Reactor Context key under which the tokens travel ({@link FencingThreadLocalAccessor#KEY}). */
    public static final String CONTEXT_KEY = FencingThreadLocalAccessor.KEY;

    private ReactiveFencing() {
    }

    /**
     * Binds {@code tokens} locally on top of the tokens already in the context (a token for the same resource is
     * hidden): for {@code contextWrite}. A token of a lock this process holds, or one the application binds itself.
     *
     * @throws IllegalArgumentException when two tokens name the same resource
     */
    public static Function<Context, Context> bind(FencingToken... tokens) {
        Objects.requireNonNull(tokens, "tokens");
        FencingSnapshot.local(Arrays.asList(tokens)); // fail now, at assembly, on duplicates or nulls
        FencingToken[] copy = tokens.clone();
        return context -> context.put(CONTEXT_KEY, tokens(context).withLocal(copy));
    }

    /** Binds the token of a lock an acquiring call holds, with its use (see {@link FencingSnapshot#withAcquired}). */
    static Function<Context, Context> bindAcquired(FencingToken token, TokenUse use) {
        return context -> context.put(CONTEXT_KEY, tokens(context).withAcquired(token, use));
    }

    /**
     * Replaces the tokens in the context with exactly {@code tokens}, received from a remote carrier (a request or
     * message header): checked like any token, but never a lock this process holds, so an acquiring method takes its
     * own lock instead of running under them.
     *
     * @throws IllegalArgumentException when two tokens name the same resource
     */
    public static Function<Context, Context> bindRemote(Collection<FencingToken> tokens) {
        FencingSnapshot remote = FencingSnapshot.remote(tokens);
        return context -> context.put(CONTEXT_KEY, remote);
    }

    /**
     * {@link #bindRemote(Collection)} with a {@link TokenUse} for each token, in order, marked when a check presents
     * it or a carrier sends it on: what a carrier binds to tell, once the request is done, whether the tokens it
     * received were checked ({@link dev.fencing.guard.UncheckedReceipts}).
     *
     * @throws IllegalArgumentException when two tokens name the same resource, or the lists differ in size
     */
    public static Function<Context, Context> bindRemote(List<FencingToken> tokens, List<TokenUse> uses) {
        FencingSnapshot remote = FencingSnapshot.remote(tokens, uses);
        return context -> context.put(CONTEXT_KEY, remote);
    }

    /** The tokens in {@code context}, with their origins; an empty snapshot when there are none. */
    public static FencingSnapshot tokens(ContextView context) {
        Object value = context.getOrDefault(CONTEXT_KEY, null);
        return value instanceof FencingSnapshot snapshot ? snapshot : FencingSnapshot.empty();
    }

    /**
     * The token for {@code resource} in {@code context}, whatever its origin, or {@code null}. A read only: a check
     * of your own presents it with {@code tokens(context).present(resource)}
     * ({@link FencingSnapshot#present}), so the acquired lock it belongs to counts as checked.
     */
    public static FencingToken current(ContextView context, String resource) {
        return tokens(context).get(resource);
    }
}
