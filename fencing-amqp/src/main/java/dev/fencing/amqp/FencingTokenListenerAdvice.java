package dev.fencing.amqp;

import com.rabbitmq.client.LongString;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.context.TokenUse;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.guard.LeftScopes;
import dev.fencing.guard.RejectionListener;
import dev.fencing.guard.UncheckedReceipts;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.metrics.ResourceFamilies;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import dev.fencing.token.TokenList;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Consumer side: an advice for a Spring AMQP listener container ({@code container.setAdviceChain(...)} or
 * {@code SimpleRabbitListenerContainerFactory.setAdviceChain(...)}) that binds the tokens of a delivered message's
 * {@value FencingTokenMessagePostProcessor#HEADER} header for the listener call, exactly (nothing the consumer thread
 * had bound stays visible) and as remote ({@link FencingContext#bindRemote}: checks only, never a lock this process
 * holds), and unbinds them when the listener returns or throws. A message without the header runs with no token
 * bound, so a fenced write it reaches is refused as missing.
 *
 * <p>Refused for good, rejected without requeue ({@link AmqpRejectAndDontRequeueException}, so to the queue's
 * dead-letter exchange when it has one, dropped otherwise), since redelivery cannot make them valid: a header that
 * does not parse by {@link TokenList}'s rules (the listener does not run), a header on a message the trust predicate
 * refuses (the listener does not run), and a listener call that failed because a fence refused its token
 * ({@link TokenRejectedException}: stale, duplicate, out of range, forged), found none ({@link MissingTokenException})
 * or refused to set the message's token aside ({@link RemoteTokenSetAsideException}).
 * Any other failure is left to the container (requeued by default). Signed tokens are bound as they came; the fence
 * verifies them, and {@link #verifying(TokenVerifier)} verifies them before the listener runs, rejecting a forged one
 * without requeue (the Spring Boot starter does that where a {@link TokenVerifier} bean exists). An asynchronous
 * listener's result is acknowledged or rejected after this advice returned: see
 * {@link #forAsyncListeners()}.
 *
 * <p>Put it first in the advice chain, ahead of a retry advice: Spring AMQP's stateless retry runs its retried
 * attempts past the advices behind it, so this advice there would bind no token on a retry and let a message it
 * rejected reach its listener (startup checks fail on such a chain).
 *
 * <p>It trusts every message delivered to the containers it is added to ({@link #FencingTokenListenerAdvice()}), those
 * its predicate accepts, or none ({@link #trustingNone()}). A container without any of them ignores the header: its
 * fenced writes see no token, and a {@code @Fenced(acquire = true)} method its listener reaches takes a lock of its
 * own, the sender's token set aside unseen (the Spring Boot starter adds {@link #trustingNone()} to such containers).
 */
public final class FencingTokenListenerAdvice implements MethodInterceptor {


    private static final String CARRIER = FencingTokenMessagePostProcessor.HEADER + " message header";

    private final Predicate<Message> trusted;

    /** What the rejection of a message with the header that {@link #trusted} refuses says after the queue's name. */
    private final String untrusted;

    /** Where the receipts and leaks are counted; kept for the copies {@link #forAsyncListeners()} makes. */
    private final FencingMetrics metrics;

    /** Whether the listeners of its containers finish their work after they return ({@link #forAsyncListeners()}). */
    private final boolean asyncListeners;

    /** Reports the tokens of a message whose listener returned while no check presented them. */
    private final UncheckedReceipts receipts;

    /** Reports the scopes a listener left open on its container thread. */
    private final LeftScopes leaks;

    /** Verifies the header's tokens before the listener runs; {@code null}: they are bound unverified. */
    private final TokenVerifier verifier;

    /** The resources whose forged tokens are bound anyway (observe mode); {@code null}: every one enforced. */
    private final FenceModes modes;

    /** Told of each token refused as forged. */
    private final RejectionListener rejections;

    /** The {@code fencing.checks{outcome=forged}} counter of each base resource, as the header filters count them. */
    private final ResourceFamilies<Counter> forged;

    /** How many base resources get a forged counter of their own (their names come from the message). */
    private static final int MAX_FORGED_RESOURCES = 64;

    /** The {@code carrier} tag of the unchecked receipts this advice counts. */
    static final String CARRIER_TAG = "amqp";

    /**
     * An advice that accepts the header on every message its container receives: add it only to containers whose
     * queues only trusted producers may publish to (RabbitMQ permissions), or use signed tokens.
     */
    public FencingTokenListenerAdvice() {
        this(message -> true, "");
    }

    /**
     * An advice that accepts the header only on messages {@code trusted} accepts (for example by the
     * broker-validated {@code user_id} property, which Spring AMQP puts in
     * {@code message.getMessageProperties().getReceivedUserId()} on a received message: {@code getUserId()} is empty
     * there); a message it refuses that carries the header is rejected without requeue and the listener does not run.
     */
    public FencingTokenListenerAdvice(Predicate<Message> trusted) {
        this(Objects.requireNonNull(trusted, "trusted"), "' carries a " + CARRIER + " but its sender is not trusted "
                + "by this FencingTokenListenerAdvice: rejected without requeue");
    }

    private FencingTokenListenerAdvice(Predicate<Message> trusted, String untrusted) {
        this(trusted, untrusted, FencingMetrics.noop(), false, null, null, RejectionListener.NONE);
    }

    private FencingTokenListenerAdvice(Predicate<Message> trusted, String untrusted, FencingMetrics metrics,
                                       boolean asyncListeners, TokenVerifier verifier, FenceModes modes,
                                       RejectionListener rejections) {
        this.trusted = trusted;
        this.untrusted = untrusted;
        this.metrics = metrics;
        this.asyncListeners = asyncListeners;
        this.verifier = verifier;
        this.modes = modes;
        this.rejections = rejections;
        this.receipts = new UncheckedReceipts(metrics, CARRIER_TAG);
        this.leaks = new LeftScopes(metrics, CARRIER_TAG, "message");
        this.forged = new ResourceFamilies<>(MAX_FORGED_RESOURCES, name -> metrics.checks(name).forged());
    }

    /**
     * This advice, trusting the same messages, that also counts the tokens of each message whose listener returned
     * while no {@code @Fenced} check presented them (and no carrier sent them on) in
     * {@value FencingMetrics#UNCHECKED_RECEIPTS} ({@code carrier=amqp}) on {@code registry}. They are logged at
     * WARNING either way: whatever the listener wrote with them was not fenced. Each listener call that left fencing
     * scopes open on its thread is counted in {@value FencingMetrics#LEFT_SCOPES}, and logged at ERROR either way.
     */
    public FencingTokenListenerAdvice withMeterRegistry(MeterRegistry registry) {
        return new FencingTokenListenerAdvice(trusted, untrusted, new FencingMetrics(registry), asyncListeners,
                verifier, modes, rejections);
    }

    /**
     * This advice, trusting the same messages, that also verifies the signature of every token in the header with
     * {@code verifier} before anything is bound, as a verifying {@code FencingTokenFilter} does for HTTP: a message
     * carrying an unsigned or badly signed token (an unknown or retired key, a signature that does not match) is
     * rejected without requeue and its listener does not run, so nothing it would have done before its fenced write
     * happens. Each such token is counted in {@code fencing.checks} ({@code outcome=forged}, its base resource as
     * {@code resource}) on the registry of {@link #withMeterRegistry}; the rejection, which Spring AMQP logs, says why
     * and names the key id, never key material. The tokens that pass are bound as they came, signature included, so
     * the fence's own verification of them is a cache hit.
     */
    public FencingTokenListenerAdvice verifying(TokenVerifier verifier) {
        return new FencingTokenListenerAdvice(trusted, untrusted, metrics, asyncListeners,
                Objects.requireNonNull(verifier, "verifier"), modes, rejections);
    }

    /** Whether this advice verifies the tokens' signatures before the listener runs ({@link #verifying}). */
    public boolean isVerifying() {
        return verifier != null;
    }

    /**
     * This advice binding a forged token (instead of rejecting the message) when {@code modes} observes its base
     * resource: the fence's own check then counts it ({@code forged}, {@code enforced=false}) and lets the call run,
     * as observe mode promises. Read on every message; {@code null}: reject every forged one.
     */
    public FencingTokenListenerAdvice withModes(FenceModes modes) {
        return new FencingTokenListenerAdvice(trusted, untrusted, metrics, asyncListeners, verifier, modes,
                rejections);
    }

    /**
     * This advice telling {@code listener} of each token it refuses as forged (a {@link ForgedTokenException} naming
     * the queue), as a verifying {@code FencingTokenFilter} tells it: the Spring Boot actuator's recent rejections
     * list them. {@code null}: tells nobody. Anything the listener throws is ignored.
     */
    public FencingTokenListenerAdvice withRejectionListener(RejectionListener listener) {
        return new FencingTokenListenerAdvice(trusted, untrusted, metrics, asyncListeners, verifier, modes,
                listener == null ? RejectionListener.NONE : listener);
    }

    /**
     * This advice, trusting the same messages and counting on the same registry, for the containers of asynchronous
     * listeners: a {@code @RabbitListener} that returns a {@code CompletableFuture} or a {@code Mono}, or is a Kotlin
     * suspend function. Such a listener returns before its work (and its fenced checks, on the thread the tokens were
     * propagated to) is done, and Spring AMQP acknowledges or rejects the message when that work completes, outside
     * this advice. So this advice does not report the tokens of a message whose listener returned unchecked (it would
     * report every message whose check had not run yet), and it cannot turn a fence refusal of that work into a
     * rejection without requeue: give the container {@code setDefaultRequeueRejected(false)} (its factory's
     * {@code setDefaultRequeueRejected(false)}, which also reaches the listener adapter that rejects the failed
     * result), or a fence refusal is requeued and redelivered for ever. Everything else is as for this advice:
     * headers are parsed, trusted and bound, and a refusal before the listener returns is rejected without requeue.
     * The Spring Boot starter fails startup on a container of an asynchronous listener whose trusting advice is not
     * this one or whose rejected results are requeued, and on one of a synchronous listener that has this one (its
     * unchecked tokens would go unreported). See docs/propagation.md, "Another process over RabbitMQ".
     */
    public FencingTokenListenerAdvice forAsyncListeners() {
        return new FencingTokenListenerAdvice(trusted, untrusted, metrics, true, verifier, modes, rejections);
    }

    /** Whether this advice is for asynchronous listeners ({@link #forAsyncListeners()}). */
    public boolean isForAsyncListeners() {
        return asyncListeners;
    }

    /**
     * An advice that trusts no sender: a message that carries the header is rejected without requeue and its
     * listener does not run; one without it runs with no token bound. For containers whose messages are not meant
     * to carry tokens, so that one sent there (a publisher's mistake, a zombie) is refused instead of ignored.
     */
    public static FencingTokenListenerAdvice trustingNone() {
        return new FencingTokenListenerAdvice(message -> false, "' carries a " + CARRIER + ", but its container "
                + "trusts no sender's tokens (FencingTokenListenerAdvice.trustingNone(), which the Spring Boot starter "
                + "adds to a listener container factory or container without a FencingTokenListenerAdvice): rejected "
                + "without requeue, the listener did not run. If the container's publishers are trusted, add new "
                + "FencingTokenListenerAdvice() (or one with a trust predicate) to its factory's advice chain; see "
                + "docs/propagation.md, \"Another process over RabbitMQ\"");
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        List<Message> messages = messages(invocation);
        List<FencingToken> tokens = tokens(messages);
        verify(tokens, messages);
        List<TokenUse> uses = UncheckedReceipts.usesFor(tokens);
        FencingScope scope = FencingContext.bindRemote(tokens, uses);
        try {
            Object result = invocation.proceed();
            if (!tokens.isEmpty() && !asyncListeners) {
                receipts.report("The listener of queue '" + queue(messages) + "'", tokens, uses);
            }
            return result;
        } catch (Throwable failure) {
            Throwable refusal = refusal(failure);
            if (refusal != null) {
                throw new AmqpRejectAndDontRequeueException("The fence refused the listener call for the message "
                        + "from queue '" + queue(messages) + "', rejected without requeue: " + refusal.getMessage(),
                        true, failure);
            }
            throw failure;
        } finally {
            leaks.close(scope, () -> "The listener of queue '" + queue(messages) + "'");
        }
    }

    /**
     * Rejects, before anything is bound, a message whose tokens include one that fails verification and whose
     * resource is enforced; counts it as forged.
     */
    private void verify(List<FencingToken> tokens, List<Message> messages) {
        if (verifier == null) {
            return;
        }
        for (FencingToken token : tokens) {
            Verification verification = verifier.verify(token);
            if (verification.valid()
                    || modes != null && modes.observesResourceOf(token.resource())) {
                continue; // observe mode: the fence judges it (counted there) and the call runs
            }
            FencingMetrics.increment(forged.of(token.resource()));
            ForgedTokenException refusal = new ForgedTokenException(token.resource(), token,
                    verification.reason(token), "the listener of queue '" + queue(messages) + "' (" + CARRIER + ")");
            try {
                rejections.rejected(refusal);
            } catch (RuntimeException ignored) {
                // the listener is advisory; the rejection is what the message gets
            }
            throw new AmqpRejectAndDontRequeueException("A message from queue '" + queue(messages) + "' carries a "
                    + "forged token in its " + CARRIER + ", rejected without requeue, the listener did not run: "
                    + refusal.getMessage(), true, refusal);
        }
    }

    /** The message (or batch) of a container's {@code invokeListener(Channel, Object)} call. */
    @SuppressWarnings("unchecked")
    private static List<Message> messages(MethodInvocation invocation) {
        Object[] arguments = invocation.getArguments();
        Object data = arguments.length == 2 ? arguments[1] : null;
        if (data instanceof Message message) {
            return List.of(message);
        }
        if (data instanceof List<?> list && !list.isEmpty() && list.stream().allMatch(Message.class::isInstance)) {
            return (List<Message>) list;
        }
        throw new IllegalStateException("FencingTokenListenerAdvice advises a listener container's "
                + "invokeListener(Channel, Object) through setAdviceChain, not " + invocation.getMethod());
    }

    /** The tokens to bind for {@code messages}; one batch binds one set, so its messages must carry the same. */
    private List<FencingToken> tokens(List<Message> messages) {
        List<FencingToken> first = null;
        for (Message message : messages) {
            List<FencingToken> tokens = tokens(message);
            if (first == null) {
                first = tokens;
            } else if (!first.equals(tokens)) {
                throw new AmqpRejectAndDontRequeueException("The messages of one batch from queue '"
                        + queue(messages) + "' carry different " + CARRIER + "s; a batch listener runs under one "
                        + "set of tokens: rejected without requeue", true, null);
            }
        }
        return first;
    }

    private List<FencingToken> tokens(Message message) {
        Object value = message.getMessageProperties().getHeader(FencingTokenMessagePostProcessor.HEADER);
        if (value == null) {
            String variant = caseVariant(message);
            if (variant != null) {
                // AMQP header names are case-sensitive: ignored, a token renamed on the way (a bridge that lower-cases
                // names) would be set aside unseen by an acquiring listener; fail closed instead
                throw new AmqpRejectAndDontRequeueException("A message from queue '" + queue(List.of(message))
                        + "' carries a '" + variant + "' header but no " + CARRIER + ": header names are "
                        + "case-sensitive, so its token would be ignored; send it as " + TokenList.HEADER
                        + ". Rejected without requeue", true, null);
            }
            return List.of();
        }
        if (!trusted.test(message)) {
            throw new AmqpRejectAndDontRequeueException("A message from queue '" + queue(List.of(message))
                    + untrusted, true, null);
        }
        try {
            return TokenList.parse(CARRIER, fields(value));
        } catch (TokenFormatException e) {
            throw new AmqpRejectAndDontRequeueException("Malformed " + CARRIER + " on a message from queue '"
                    + queue(List.of(message)) + "', rejected without requeue: " + e.getMessage(), true, e);
        }
    }

    /** The name of a header that spells {@value TokenList#HEADER} in another case, or {@code null}. */
    private static String caseVariant(Message message) {
        for (String name : message.getMessageProperties().getHeaders().keySet()) {
            if (name.equalsIgnoreCase(TokenList.HEADER)) {
                return name;
            }
        }
        return null;
    }

    /**
     * The header's text: a string, or the forms the AMQP client delivers one in (a {@link LongString} past Spring
     * AMQP's conversion limit, bytes), or a list of them as repeated fields.
     */
    static List<String> fields(Object value) {
        if (value instanceof List<?> list) {
            List<String> fields = new ArrayList<>(list.size());
            for (Object element : list) {
                if (element == null || element instanceof List<?>) {
                    throw notText(element); // a void field (the AMQP client delivers it as null), or a nested list
                }
                fields.addAll(fields(element));
            }
            return fields;
        }
        if (value instanceof String text) {
            return List.of(text);
        }
        if (value instanceof LongString text) {
            return List.of(decode(text.getBytes()));
        }
        if (value instanceof byte[] bytes) {
            return List.of(decode(bytes));
        }
        throw notText(value);
    }

    private static String decode(byte[] bytes) {
        if (bytes.length > 4L * TokenList.MAX_LENGTH) {
            throw new TokenFormatException(CARRIER + " is " + bytes.length + " bytes long, more than the "
                    + TokenList.MAX_LENGTH + " characters allowed");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static TokenFormatException notText(Object value) {
        return new TokenFormatException(CARRIER + (value == null ? " has a void field"
                : " is a " + value.getClass().getName()) + ", not text");
    }

    /**
     * Whether {@code failure}'s cause chain holds a fence refusal ({@link TokenRejectedException},
     * {@link MissingTokenException}, {@link RemoteTokenSetAsideException}): a failure that redelivery or a retry
     * cannot turn into a success. For a retry policy's predicate, so that a refused message is not run (and counted)
     * again by a retry advice inside this one; the Spring Boot starter sets it on Boot's listener retry.
     */
    public static boolean isFenceRefusal(Throwable failure) {
        return refusal(failure) != null;
    }

    /** The fence's refusal in {@code failure}'s cause chain, or {@code null} when it failed for another reason. */
    private static Throwable refusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof TokenRejectedException || t instanceof MissingTokenException
                    || t instanceof RemoteTokenSetAsideException) {
                return t;
            }
        }
        return null;
    }

    private static String queue(List<Message> messages) {
        return String.valueOf(messages.get(0).getMessageProperties().getConsumerQueue());
    }
}
