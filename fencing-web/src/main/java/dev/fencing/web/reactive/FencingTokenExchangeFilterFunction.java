package dev.fencing.web.reactive;

import dev.fencing.FencingException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.MissingTokenException;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import dev.fencing.web.FencingTokenClientInterceptor;
import dev.fencing.web.internal.Destinations;
import dev.fencing.web.internal.RemoteRefusals;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import java.net.URI;
import java.nio.charset.Charset;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Client side, for {@code WebClient}: sends the tokens of the subscriber's Reactor Context
 * ({@link ReactiveFencing#CONTEXT_KEY}) in the {@code Fencing-Token} header of the requests it is told to, replacing
 * any value set by hand. When the context holds no tokens entry at all (blocking code), it sends the tokens bound
 * ({@link FencingContext}) on the thread that built the request ({@code retrieve()}, {@code exchangeToMono(..)}): read
 * when the request is made, on subscription, where it subscribes on that thread; where it subscribes on another (a
 * retry, {@code subscribeOn}), the tokens that thread had bound when it built the request, never the tokens of the
 * thread it runs on. Nothing is added when there is no token. Register it with
 * {@code WebClient.builder().apply(filter)}, which adds it as a filter and records the building thread on each
 * request; added with {@code filter(..)} alone it cannot tell the building thread and reads the subscribing thread's
 * tokens (a retry may send another caller's), which it warns of once.
 *
 * <p>As {@link FencingTokenClientInterceptor} does for {@code RestClient}: {@link #forHosts(Collection)} sends the
 * tokens only to the hosts named, the no-argument constructor to every request of the client; and on those requests a
 * remote fence's refusal (409 stale/duplicate/out-of-range, 428 missing, 403 forged, with the library's problem types)
 * becomes the library's exception ({@link StaleTokenException}, {@link MissingTokenException},
 * {@link ForgedTokenException}, ...) as an error signal, with the {@link WebClientResponseException} the client would
 * otherwise have produced as its cause. Every other response reaches the client untouched (a problem body that had to
 * be read to tell is replayed). At most 64 KiB are read to tell, with or without a {@code Content-Length} (plus the
 * buffer that passed the bound): a longer body is no refusal and is passed on at once, read from the start, its rest
 * unread. With a registry each mapped refusal is counted in
 * {@value FencingTokenClientInterceptor#REMOTE_REJECTIONS}.
 *
 * <p>From Kotlin coroutines, Spring's extensions ({@code awaitBody}, {@code awaitExchange}, ...) give the request a
 * context of their own: the coroutine's Reactor context with the awaiting thread's context-propagation values put
 * over it. Where no token is bound on that thread, that hides the coroutine's tokens (a lock's, in its body); this
 * filter then reads them from the coroutine's Reactor context, which Spring passes along.
 */
public final class FencingTokenExchangeFilterFunction implements ExchangeFilterFunction,
        Consumer<WebClient.Builder> {

    /** The request attribute {@link #accept} records: the thread that built the request, and its tokens then. */
    static final String CALLER = FencingTokenExchangeFilterFunction.class.getName() + ".caller";

    private static final Log log = LogFactory.getLog(FencingTokenExchangeFilterFunction.class);

    /** Whether Spring's Kotlin coroutine extensions can be in use (kotlinx-coroutines-reactor is there). */
    private static final boolean COROUTINES = ClassUtils.isPresent("kotlinx.coroutines.reactor.ReactorContext",
            FencingTokenExchangeFilterFunction.class.getClassLoader());

    private final Predicate<ClientRequest> sendTo;
    private final RemoteRefusals refusals;
    private final AtomicBoolean warnedOfFilterAlone = new AtomicBoolean();

    /** Sends the tokens with every request of the client it is registered on. */
    public FencingTokenExchangeFilterFunction() {
        this(request -> true);
    }

    /**
     * Sends the tokens only with the requests {@code sendTo} accepts; the others go out without the header (a
     * {@code Fencing-Token} header set by hand on them is left as it is) and their answers are not mapped.
     */
    public FencingTokenExchangeFilterFunction(Predicate<ClientRequest> sendTo) {
        this(sendTo, null);
    }

    private FencingTokenExchangeFilterFunction(Predicate<ClientRequest> sendTo, MeterRegistry registry) {
        this.sendTo = Objects.requireNonNull(sendTo, "sendTo");
        this.refusals = new RemoteRefusals(registry);
    }

    /**
     * Sends the tokens only to the hosts named, compared ignoring case: an entry {@code host} matches that host on any
     * port, an entry {@code host:port} only that port (the scheme's default port when the URI has none). No host
     * named: the tokens are sent nowhere.
     *
     * @throws dev.fencing.FencingConfigurationException when an entry is not {@code host} or {@code host:port} (a
     *                                                   scheme, a path, a query, user-info, or blank): it could never
     *                                                   match, and no token would be sent
     */
    public static FencingTokenExchangeFilterFunction forHosts(Collection<String> hosts) {
        Predicate<URI> allowed = Destinations.hosts(hosts);
        return new FencingTokenExchangeFilterFunction(request -> allowed.test(request.url()));
    }

    /**
     * This filter function, sending to the same requests, that also counts each refusal it maps in
     * {@value FencingTokenClientInterceptor#REMOTE_REJECTIONS} on {@code registry} ({@code null}: counts nothing).
     */
    public FencingTokenExchangeFilterFunction withMeterRegistry(MeterRegistry registry) {
        return new FencingTokenExchangeFilterFunction(sendTo, registry);
    }

    /**
     * Registers this filter function on {@code builder} ({@code WebClient.builder().apply(filter)}) together with a
     * default request step that records, on each request as it is built, the building thread and the tokens bound
     * on it: what a request subscribed on another thread sends.
     */
    @Override
    public void accept(WebClient.Builder builder) {
        builder.filter(this).defaultRequest(request -> request.attribute(CALLER,
                new Caller(Thread.currentThread(), FencingContext.snapshot())));
    }

    /** The thread that built a request, and the tokens it had bound then. */
    record Caller(Thread thread, FencingSnapshot tokens) {
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        if (!sendTo.test(request)) {
            return next.exchange(request);
        }
        return Mono.deferContextual(context -> {
            FencingSnapshot snapshot = context.hasKey(ReactiveFencing.CONTEXT_KEY) ? tokens(context)
                    : threadTokens(request);
            Collection<FencingToken> tokens = snapshot.values();
            ClientRequest sent = tokens.isEmpty() ? request : ClientRequest.from(request)
                    .headers(headers -> headers.set(FencingHeader.NAME, FencingHeader.format(tokens)))
                    .build();
            return next.exchange(sent)
                    .doOnNext(answered -> snapshot.markSent(tokens)) // a request that failed to go out did not
                    .flatMap(response -> mapRefusal(sent, response));
        });
    }

    /**
     * Blocking code's tokens: the subscribing thread's when it built the request, else those the building thread had
     * when it built it; without the record of {@link #accept} (registered with {@code filter(..)} alone), the
     * subscribing thread's.
     */
    private FencingSnapshot threadTokens(ClientRequest request) {
        Object recorded = request.attributes().get(CALLER);
        if (recorded instanceof Caller caller) {
            return caller.thread() == Thread.currentThread() ? FencingContext.snapshot() : caller.tokens();
        }
        FencingSnapshot tokens = FencingContext.snapshot();
        if (!tokens.values().isEmpty() && warnedOfFilterAlone.compareAndSet(false, true)) {
            log.warn("FencingTokenExchangeFilterFunction was added with WebClient.Builder.filter(..) alone: it sends "
                    + "the tokens bound on the thread that subscribes to a request, so a retry or subscribeOn may "
                    + "send none, or another caller's; register it with WebClient.builder().apply(filter), which "
                    + "records the thread that built each request");
        }
        return tokens;
    }

    /**
     * The tokens of a context that has a tokens entry; the coroutine's when Spring's Kotlin extensions put the
     * awaiting thread's empty tokens over the coroutine's ({@link CoroutineTokens}).
     */
    private static FencingSnapshot tokens(ContextView context) {
        FencingSnapshot tokens = ReactiveFencing.tokens(context);
        if (tokens.values().isEmpty() && COROUTINES) {
            return CoroutineTokens.of(context, tokens);
        }
        return tokens;
    }

    /** The response, or the library's exception as an error when it is a remote fence's refusal. */
    private Mono<ClientResponse> mapRefusal(ClientRequest request, ClientResponse response) {
        int status = response.statusCode().value();
        MediaType contentType = response.headers().contentType().orElse(null);
        if (!RemoteRefusals.candidate(status, contentType)) {
            return Mono.just(response);
        }
        OptionalLong length = response.headers().contentLength();
        if (length.isPresent() && length.getAsLong() > RemoteRefusals.MAX_PROBLEM_BYTES) {
            return Mono.just(response);
        }
        // Without a Content-Length, read only until the bound is passed: the first chunk is the whole body when it
        // is within the bound, else what was read up to the buffer that passed it, the rest still unread.
        Flux<List<DataBuffer>> chunks = Flux.defer(() -> {
            long[] read = {0};
            return response.body(BodyExtractors.toDataBuffers()).bufferUntil(
                    buffer -> (read[0] += buffer.readableByteCount()) > RemoteRefusals.MAX_PROBLEM_BYTES);
        });
        return chunks.switchOnFirst((first, all) -> {
            if (first.isOnError()) {
                return Mono.error(first.getThrowable());
            }
            List<DataBuffer> buffers = first.hasValue() ? first.get() : List.of();
            int size = buffers.stream().mapToInt(DataBuffer::readableByteCount).sum();
            if (size > RemoteRefusals.MAX_PROBLEM_BYTES) {   // not a refusal: passed on, read from the start
                Flux<DataBuffer> body = all.concatMapIterable(Function.identity());
                return Mono.just(response.mutate().body(unread -> body).build());
            }
            byte[] bytes = new byte[size];
            int at = 0;
            for (DataBuffer buffer : buffers) {
                int count = buffer.readableByteCount();
                buffer.read(bytes, at, count);
                at += count;
                DataBufferUtils.release(buffer);
            }
            return refusalOrReplay(request, response, contentType, bytes);
        }, false).singleOrEmpty();
    }

    /** The library's exception for a refusal whose body is {@code bytes}, else the response replaying them. */
    private Mono<ClientResponse> refusalOrReplay(ClientRequest request, ClientResponse response,
                                                 MediaType contentType, byte[] bytes) {
        Charset charset = RemoteRefusals.charset(contentType);
        FencingException refusal = refusals.refusal(RemoteRefusals.describe(request.method(), request.url()),
                response.statusCode().value(), new String(bytes, charset));
        if (refusal == null) {   // the body read is replaced: the original is not subscribed again
            return Mono.just(response.mutate()
                    .body(read -> Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(bytes))))
                    .build());
        }
        refusal.initCause(WebClientResponseException.create(response.statusCode(), "",
                response.headers().asHttpHeaders(), bytes, charset, response.request()));
        return Mono.error(refusal);
    }
}
