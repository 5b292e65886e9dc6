package dev.fencing.amqp;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.impl.LongStringHelper;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenList;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.aop.framework.ProxyFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The advice as a listener container applies it (a proxy around {@code invokeListener(Channel, Object)}), without a
 * broker: what it binds, when it unbinds, what it rejects without requeue and what it leaves to the container.
 */
class FencingTokenListenerAdviceTest {

    /** The shape of the container's private ContainerDelegate. */
    interface Delegate {
        void invokeListener(Channel channel, Object data);
    }

    private static final FencingToken ACCOUNTS = new FencingToken("accounts:42", 7, "producer-a");
    private static final FencingToken LEDGER = new FencingToken("ledger", 3, "producer-a");
    private static final FencingToken LEFTOVER = new FencingToken("leftover", 1, "this-thread");

    private static Delegate advised(FencingTokenListenerAdvice advice, Consumer<Object> listener) {
        ProxyFactory factory = new ProxyFactory();
        factory.addAdvice(advice);
        factory.addInterface(Delegate.class);
        factory.setTarget((Delegate) (channel, data) -> listener.accept(data));
        return (Delegate) factory.getProxy();
    }

    private static Message message(Object header) {
        MessageProperties properties = new MessageProperties();
        properties.setConsumerQueue("orders");
        if (header != null) {
            properties.setHeader(FencingTokenMessagePostProcessor.HEADER, header);
        }
        return new Message(new byte[0], properties);
    }

    @Test
    void bindsTheHeaderExactlyAsRemoteAndRestoresTheThreadAfterwards() {
        List<FencingSnapshot> seen = new ArrayList<>();
        Delegate delegate = advised(new FencingTokenListenerAdvice(), data -> seen.add(FencingContext.snapshot()));
        try (FencingScope ignored = FencingContext.bind(LEFTOVER)) {
            delegate.invokeListener(null, message(TokenList.format(List.of(ACCOUNTS, LEDGER))));
            assertThat(FencingContext.current("leftover")).isEqualTo(LEFTOVER);
            assertThat(FencingContext.current("accounts:42")).isNull();
        }
        FencingSnapshot snapshot = seen.get(0);
        assertThat(snapshot).containsOnlyKeys("accounts:42", "ledger");
        assertThat(snapshot.get("accounts:42")).isEqualTo(ACCOUNTS);
        assertThat(snapshot.isRemote("accounts:42")).isTrue();
        assertThat(snapshot.isRemote("ledger")).isTrue();
    }

    /**
     * A listener that returned while no check presented a token it received wrote around the fence (or not at all):
     * counted and logged, by family; one that checked or sent it on is not.
     */
    @Test
    void aTokenTheListenerNeverPresentedIsReportedOnePresentedOrSentOnIsNot() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        FencingTokenListenerAdvice advice = new FencingTokenListenerAdvice().withMeterRegistry(registry);
        try (dev.fencing.testsupport.LogRecords logs = dev.fencing.testsupport.LogRecords.of(
                dev.fencing.guard.UncheckedReceipts.class)) {
            advised(advice, data -> FencingContext.present("ledger"))
                    .invokeListener(null, message(TokenList.format(List.of(ACCOUNTS, LEDGER))));
            advised(advice, data -> FencingContext.snapshot().markSent(List.of(ACCOUNTS)))
                    .invokeListener(null, message(TokenList.format(List.of(ACCOUNTS))));
            assertThat(registry.find(dev.fencing.metrics.FencingMetrics.UNCHECKED_RECEIPTS).tag("carrier", "amqp")
                    .tag("resource", "accounts").counter().count()).isEqualTo(1);
            assertThat(registry.find(dev.fencing.metrics.FencingMetrics.UNCHECKED_RECEIPTS).tag("resource", "ledger")
                    .counter()).as("presented").isNull();
            assertThat(logs.records()).singleElement().satisfies(r -> assertThat(r.getMessage())
                    .startsWith("The listener of queue 'orders' received the fencing token of resource 'accounts:42'"));
        }
    }

    /**
     * The advice for asynchronous listeners does not report at return (the listener's work, and its check, may still
     * be running); a copy with a registry stays one.
     */
    @Test
    void theAdviceForAsyncListenersDoesNotReportATokenAtReturn() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        FencingTokenListenerAdvice advice = new FencingTokenListenerAdvice().forAsyncListeners()
                .withMeterRegistry(registry);
        assertThat(advice.isForAsyncListeners()).isTrue();
        assertThat(new FencingTokenListenerAdvice().withMeterRegistry(registry).isForAsyncListeners()).isFalse();
        try (dev.fencing.testsupport.LogRecords logs = dev.fencing.testsupport.LogRecords.of(
                dev.fencing.guard.UncheckedReceipts.class)) {
            advised(advice, data -> { }).invokeListener(null, message(TokenList.format(List.of(ACCOUNTS))));
            assertThat(registry.find(dev.fencing.metrics.FencingMetrics.UNCHECKED_RECEIPTS).counter()).isNull();
            assertThat(logs.records()).isEmpty();
        }
    }

    /**
     * A listener that leaves a scope open has it closed when its call ends, named at ERROR (once a minute per queue)
     * and counted, without failing the delivery (which would have the message redelivered, and leaked again); the
     * thread is clean for the next message.
     */
    @Test
    void aScopeTheListenerLeftOpenIsClosedLoggedAndCountedWithoutFailingTheMessage() {
        FencingToken leaked = new FencingToken("accounts:9", 5, "listener");
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        Delegate delegate = advised(new FencingTokenListenerAdvice().withMeterRegistry(registry),
                data -> FencingContext.bind(leaked));
        try (dev.fencing.testsupport.LogRecords logs = dev.fencing.testsupport.LogRecords.of(
                dev.fencing.guard.LeftScopes.class)) {
            delegate.invokeListener(null, message(TokenList.format(List.of(ACCOUNTS))));
            delegate.invokeListener(null, message(null));
            assertThat(FencingContext.isEmpty()).as("nothing left for the next message").isTrue();
            assertThat(logs.records()).singleElement().satisfies(r -> assertThat(r.getMessage())
                    .startsWith("The listener of queue 'orders' left fencing tokens bound on its thread")
                    .contains("accounts:9").contains("next message"));
            assertThat(registry.get(dev.fencing.metrics.FencingMetrics.LEFT_SCOPES).tag("carrier", "amqp").counter()
                    .count()).isEqualTo(2);
        }
    }

    @Test
    void aMessageWithoutTheHeaderRunsWithNothingBoundNotWithTheThreadsLeftovers() {
        List<FencingSnapshot> seen = new ArrayList<>();
        Delegate delegate = advised(new FencingTokenListenerAdvice(), data -> seen.add(FencingContext.snapshot()));
        try (FencingScope ignored = FencingContext.bind(LEFTOVER)) {
            delegate.invokeListener(null, message(null));
        }
        assertThat(seen.get(0)).isEmpty();
    }

    @Test
    void unbindsWhenTheListenerThrowsAndLeavesOtherFailuresToTheContainer() {
        Delegate delegate = advised(new FencingTokenListenerAdvice(), data -> {
            throw new IllegalStateException("database down");
        });
        assertThatThrownBy(() -> delegate.invokeListener(null, message(ACCOUNTS.toText())))
                .isExactlyInstanceOf(IllegalStateException.class);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void aFenceRefusalAnywhereInTheCauseChainIsRejectedWithoutRequeue() {
        TokenRejectedException stale = TokenRejectedException.of("accounts:42", ACCOUNTS, 8, Verdict.REJECT_STALE);
        Delegate staleListener = advised(new FencingTokenListenerAdvice(), data -> {
            throw new RuntimeException("listener failed", stale);
        });
        assertThatThrownBy(() -> staleListener.invokeListener(null, message(ACCOUNTS.toText())))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                .hasMessageContaining("queue 'orders'").hasMessageEndingWith(stale.getMessage())
                .hasRootCauseInstanceOf(StaleTokenException.class)
                .satisfies(e -> assertThat(((AmqpRejectAndDontRequeueException) e).isRejectManual()).isTrue());
        Delegate missingListener = advised(new FencingTokenListenerAdvice(), data -> {
            throw new MissingTokenException("accounts:42", "write");
        });
        assertThatThrownBy(() -> missingListener.invokeListener(null, message(null)))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                .hasCauseInstanceOf(MissingTokenException.class);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void anAcquiringServiceNeverSetsTheProducersTokenAsideAndTheMessageIsRejected() {
        // the trial's case: the listener calls a @Fenced(acquire = true) service for the resource the message's
        // (old) token is for; taking a fresh lock there would apply the zombie producer's message
        var metrics = new dev.fencing.metrics.FencingMetrics(
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
        var store = new dev.fencing.store.InMemoryFenceStore();
        var issuer = new dev.fencing.issuer.InMemoryTokenIssuer();
        var guard = new dev.fencing.guard.FenceGuard(store, issuer, java.time.Duration.ofSeconds(1));
        var service = new dev.fencing.guard.FencePoint("Ledger.post()", "accounts:42", null, null, true, metrics);
        AtomicInteger written = new AtomicInteger();
        Delegate delegate = advised(new FencingTokenListenerAdvice(), data -> {
            try {
                guard.invoke(service, new Object[0], written::incrementAndGet);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        });
        assertThatThrownBy(() -> delegate.invokeListener(null, message(ACCOUNTS.toText())))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                .hasCauseInstanceOf(dev.fencing.guard.RemoteTokenSetAsideException.class);
        assertThat(written).hasValue(0);
        assertThat(store.maxSeen("accounts:42")).isEmpty();
        // a message that carries no token for it: the service takes its own lock and writes
        delegate.invokeListener(null, message(null));
        assertThat(written).hasValue(1);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void malformedHeadersAreRejectedWithoutRequeueBeforeTheListenerRuns() {
        AtomicInteger calls = new AtomicInteger();
        Delegate delegate = advised(new FencingTokenListenerAdvice(), data -> calls.incrementAndGet());
        String tooMany = IntStream.rangeClosed(1, TokenList.MAX_ENTRIES + 1)
                .mapToObj(i -> "r" + i + "#1@p").collect(Collectors.joining(","));
        List<Object> malformed = List.of("accounts:42#x@p", "accounts:42#1@p,,ledger#1@p", "a#1@p, a#2@p", tooMany,
                "r#1@" + "p".repeat(TokenList.MAX_LENGTH), 42, List.of(List.of("a#1@p")),
                Arrays.asList("a#1@p", null)); // a void field in an array: was a NullPointerException, requeued
        for (Object header : malformed) {
            assertThatThrownBy(() -> delegate.invokeListener(null, message(header)))
                    .as("header %s", header)
                    .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                    .hasMessageContaining("Fencing-Token message header");
        }
        assertThat(calls).hasValue(0);
    }

    @Test
    void readsTheFormsTheAmqpClientDeliversTextIn() {
        List<FencingSnapshot> seen = new ArrayList<>();
        Delegate delegate = advised(new FencingTokenListenerAdvice(), data -> seen.add(FencingContext.snapshot()));
        delegate.invokeListener(null, message(LongStringHelper.asLongString(ACCOUNTS.toText())));
        delegate.invokeListener(null, message(ACCOUNTS.toText().getBytes(StandardCharsets.UTF_8)));
        delegate.invokeListener(null,
                message(List.of(ACCOUNTS.toText(), LongStringHelper.asLongString(LEDGER.toText()))));
        assertThat(seen.get(0)).containsOnlyKeys("accounts:42");
        assertThat(seen.get(1)).containsOnlyKeys("accounts:42");
        assertThat(seen.get(2)).containsOnlyKeys("accounts:42", "ledger");
    }

    @Test
    void aBatchRunsUnderItsOneSetOfTokensOrIsRejected() {
        List<FencingSnapshot> seen = new ArrayList<>();
        Delegate delegate = advised(new FencingTokenListenerAdvice(), data -> seen.add(FencingContext.snapshot()));
        delegate.invokeListener(null, List.of(message(ACCOUNTS.toText()), message(ACCOUNTS.toText())));
        assertThat(seen.get(0)).containsOnlyKeys("accounts:42");
        assertThatThrownBy(() -> delegate.invokeListener(null, List.of(message(ACCOUNTS.toText()), message(null))))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class).hasMessageContaining("one batch");
        assertThat(seen).hasSize(1);
    }

    @Test
    void anUntrustedSenderWithTheHeaderIsRejectedOneWithoutItRuns() {
        AtomicInteger calls = new AtomicInteger();
        Delegate delegate = advised(new FencingTokenListenerAdvice(
                        m -> "svc-a".equals(m.getMessageProperties().getReceivedUserId())),
                data -> calls.incrementAndGet());
        Message untrusted = message(ACCOUNTS.toText());
        untrusted.getMessageProperties().setReceivedUserId("somebody");
        assertThatThrownBy(() -> delegate.invokeListener(null, untrusted))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class).hasMessageContaining("not trusted");
        Message trusted = message(ACCOUNTS.toText());
        trusted.getMessageProperties().setReceivedUserId("svc-a");
        delegate.invokeListener(null, trusted);
        Message withoutHeader = message(null);
        withoutHeader.getMessageProperties().setReceivedUserId("somebody");
        delegate.invokeListener(null, withoutHeader);
        assertThat(calls).hasValue(2);
    }

    @Test
    void trustingNoneRejectsEveryMessageWithTheHeaderNamingTheAdviceToAddAndRunsTheOthersWithNothingBound() {
        List<FencingSnapshot> seen = new ArrayList<>();
        Delegate delegate = advised(FencingTokenListenerAdvice.trustingNone(),
                data -> seen.add(FencingContext.snapshot()));
        Message zombie = message(ACCOUNTS.toText());
        zombie.getMessageProperties().setReceivedUserId("svc-a");
        assertThatThrownBy(() -> delegate.invokeListener(null, zombie))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                .hasMessageStartingWith("A message from queue 'orders' carries a Fencing-Token message header, but "
                        + "its container trusts no sender's tokens")
                .hasMessageContaining("add new FencingTokenListenerAdvice()");
        assertThatThrownBy(() -> delegate.invokeListener(null, message("not a token")))
                .as("refused as untrusted before it is parsed")
                .isInstanceOf(AmqpRejectAndDontRequeueException.class).hasMessageContaining("trusts no sender");
        assertThat(seen).isEmpty();
        try (FencingScope ignored = FencingContext.bind(LEFTOVER)) {
            delegate.invokeListener(null, message(null));
        }
        assertThat(seen).hasSize(1);
        assertThat(seen.get(0)).isEmpty();
    }

    /**
     * A token under another spelling of the header's name (a bridge that lower-cases names) would be ignored, and an
     * acquiring listener would set it aside unseen: rejected, with both advices, naming the spelling (a new user's
     * re-trial wrote under its own lock with a 'fencing-token' header).
     */
    @Test
    void aHeaderNameInAnotherCaseIsRejectedNotIgnored() {
        AtomicInteger calls = new AtomicInteger();
        for (FencingTokenListenerAdvice advice : List.of(new FencingTokenListenerAdvice(),
                FencingTokenListenerAdvice.trustingNone())) {
            Delegate delegate = advised(advice, data -> calls.incrementAndGet());
            Message renamed = message(null);
            renamed.getMessageProperties().setHeader("fencing-token", ACCOUNTS.toText());
            assertThatThrownBy(() -> delegate.invokeListener(null, renamed))
                    .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                    .hasMessageContaining("'fencing-token' header").hasMessageContaining("case-sensitive");
        }
        assertThat(calls).hasValue(0);
    }

    @Test
    void aFenceRefusalAnywhereInTheCauseChainIsOneNoRetryCanMend() {
        TokenRejectedException stale = TokenRejectedException.of("accounts:42", ACCOUNTS, 8, Verdict.REJECT_STALE);
        assertThat(FencingTokenListenerAdvice.isFenceRefusal(new RuntimeException("listener failed", stale))).isTrue();
        assertThat(FencingTokenListenerAdvice.isFenceRefusal(new MissingTokenException("accounts:42", "write")))
                .isTrue();
        assertThat(FencingTokenListenerAdvice.isFenceRefusal(new IllegalStateException("database down"))).isFalse();
    }
    /**
     * A verifying advice rejects, without requeue and before its listener runs, a message whose header holds an
     * unsigned or badly signed token, and counts it and tells the rejection listener as the header filters do
     * ({@code fencing.checks}, forged, by base resource); a validly signed token is bound as it came. Without
     * {@code verifying} the forged message's listener ran, its work before the fenced write done, and only that write
     * was refused at the fence.
     */
    @Test
    void aVerifyingAdviceRejectsAForgedTokenBeforeTheListenerRunsAndCountsIt() {
        byte[] secret = new byte[32];
        Arrays.fill(secret, (byte) 7);
        dev.fencing.signing.TokenSigner signer = dev.fencing.signing.TokenSigner.hmac("k1", secret);
        dev.fencing.signing.TokenVerifier verifier = new dev.fencing.signing.TokenVerifier(
                dev.fencing.signing.KeyRing.of(dev.fencing.signing.VerificationKey.hmac("k1", secret)));
        FencingToken signed = signer.sign(ACCOUNTS);
        FencingToken otherKey = dev.fencing.signing.TokenSigner.hmac("k2", secret)
                .sign(new FencingToken("orders:1", 2, "producer-a"));
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        List<TokenRejectedException> told = new ArrayList<>();
        FencingTokenListenerAdvice advice = new FencingTokenListenerAdvice().withRejectionListener(told::add)
                .withMeterRegistry(registry).verifying(verifier);
        assertThat(advice.isVerifying()).isTrue();
        assertThat(new FencingTokenListenerAdvice().isVerifying()).isFalse();
        assertThat(advice.forAsyncListeners().isVerifying()).isTrue();

        List<FencingSnapshot> ran = new ArrayList<>();
        Delegate delegate = advised(advice, data -> {
            ran.add(FencingContext.snapshot());
            FencingContext.present("accounts:42");
        });
        for (FencingToken forged : List.of(LEDGER, otherKey)) {
            assertThatThrownBy(() -> delegate.invokeListener(null, message(TokenList.format(List.of(signed, forged)))))
                    .as("%s", forged)
                    .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                    .hasMessageContaining("forged token").hasMessageContaining("queue 'orders'")
                    .hasCauseInstanceOf(dev.fencing.rule.ForgedTokenException.class);
        }
        assertThat(ran).as("the listener never ran").isEmpty();
        assertThat(told).as("told as the header filters tell it").hasSize(2)
                .allSatisfy(rejection -> assertThat(rejection.verdict()).isEqualTo(Verdict.REJECT_FORGED))
                .extracting(TokenRejectedException::resource).containsExactly("ledger", "orders:1");
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(registry.get(dev.fencing.metrics.FencingMetrics.CHECKS).tag("outcome", "forged")
                .tag("resource", "ledger").counter().count()).isEqualTo(1);
        assertThat(registry.get(dev.fencing.metrics.FencingMetrics.CHECKS).tag("outcome", "forged")
                .tag("resource", "orders").counter().count()).isEqualTo(1);
        assertThat(registry.find(dev.fencing.metrics.FencingMetrics.CHECKS).tag("resource", "accounts").counter())
                .as("its signed token passed").isNull();

        delegate.invokeListener(null, message(signed.toText()));
        assertThat(ran).singleElement().satisfies(snapshot -> {
            assertThat(snapshot.get("accounts:42")).isEqualTo(signed);
            assertThat(snapshot.get("accounts:42").isSigned()).isTrue();
        });
    }

    /** Observe mode: a forged token of an observed resource is bound, for the fence to count and let through. */
    @Test
    void aVerifyingAdviceBindsAForgedTokenOfAnObservedResource() {
        byte[] secret = new byte[32];
        dev.fencing.signing.TokenVerifier verifier = new dev.fencing.signing.TokenVerifier(
                dev.fencing.signing.KeyRing.of(dev.fencing.signing.VerificationKey.hmac("k1", secret)));
        dev.fencing.mode.FenceModes modes = new dev.fencing.mode.FenceModes(dev.fencing.mode.FenceMode.ENFORCE,
                java.util.Map.of("accounts", dev.fencing.mode.FenceMode.OBSERVE));
        List<FencingSnapshot> ran = new ArrayList<>();
        Delegate delegate = advised(new FencingTokenListenerAdvice().verifying(verifier).withModes(modes),
                data -> ran.add(FencingContext.snapshot()));

        delegate.invokeListener(null, message(ACCOUNTS.toText()));
        assertThatThrownBy(() -> delegate.invokeListener(null, message(LEDGER.toText())))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class);
        assertThat(ran).singleElement().satisfies(snapshot -> assertThat(snapshot.get("accounts:42"))
                .isEqualTo(ACCOUNTS));
    }

    /**
     * A resource with a colon in its declared name ({@code orders:eu}) is judged by its own mode, not by the text
     * before its first colon: a forged {@code orders:eu:7} of an enforced {@code orders:eu} beside an observed
     * {@code orders} is rejected before the listener runs, and a forged {@code orders:7} of the observed
     * {@code orders} is bound; and the other way round once the modes are swapped.
     */
    @Test
    void aResourceWithAColonInItsNameIsJudgedByItsOwnMode() {
        dev.fencing.signing.TokenVerifier verifier = new dev.fencing.signing.TokenVerifier(
                dev.fencing.signing.KeyRing.of(dev.fencing.signing.VerificationKey.hmac("k1", new byte[32])));
        dev.fencing.mode.FenceModes modes = new dev.fencing.mode.FenceModes(dev.fencing.mode.FenceMode.ENFORCE,
                java.util.Map.of("orders", dev.fencing.mode.FenceMode.OBSERVE));
        modes.declare(java.util.Set.of("orders", "orders:eu"), java.util.Set.of("orders", "orders:eu"));
        List<FencingSnapshot> ran = new ArrayList<>();
        Delegate delegate = advised(new FencingTokenListenerAdvice().verifying(verifier).withModes(modes),
                data -> ran.add(FencingContext.snapshot()));
        FencingToken enforcedEntity = new FencingToken("orders:eu:7", 7, "evil");
        FencingToken observedEntity = new FencingToken("orders:7", 7, "evil");

        assertThatThrownBy(() -> delegate.invokeListener(null, message(enforcedEntity.toText())))
                .as("a forged token of the enforced orders:eu").isInstanceOf(AmqpRejectAndDontRequeueException.class)
                .hasMessageContaining("forged token");
        delegate.invokeListener(null, message(observedEntity.toText()));
        assertThat(ran).as("a forged token of the observed orders").singleElement()
                .satisfies(snapshot -> assertThat(snapshot.get("orders:7")).isEqualTo(observedEntity));

        modes.set("orders", dev.fencing.mode.FenceMode.ENFORCE, "test");
        modes.set("orders:eu", dev.fencing.mode.FenceMode.OBSERVE, "test");
        ran.clear();
        delegate.invokeListener(null, message(enforcedEntity.toText()));
        assertThat(ran).as("a forged token of the observed orders:eu").singleElement()
                .satisfies(snapshot -> assertThat(snapshot.get("orders:eu:7")).isEqualTo(enforcedEntity));
        assertThatThrownBy(() -> delegate.invokeListener(null, message(observedEntity.toText())))
                .as("a forged token of the enforced orders").isInstanceOf(AmqpRejectAndDontRequeueException.class);
    }
}
