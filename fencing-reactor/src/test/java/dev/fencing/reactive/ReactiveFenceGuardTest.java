package dev.fencing.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive guard on its own (no Spring): the check runs when the publisher is subscribed, the token comes from
 * the Reactor Context before the thread, every failure is an error signal counted as the blocking guard counts it.
 */
class ReactiveFenceGuardTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();
    private final List<TokenRejectedException> rejected = new ArrayList<>();
    private final ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store).rejectionListener(rejected::add).build();
    private final FencePoint save = new FencePoint("AccountRepository.save(long)", "accounts", null, null, false,
            metrics);
    private final AtomicInteger writes = new AtomicInteger();

    private double checks(String outcome) {
        var counter = registry.find("fencing.checks").tag("resource", "accounts").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private static FencingToken token(long value) {
        return new FencingToken("accounts", value, "holder-" + value);
    }

    /** A write that counts its subscriptions and emits "saved". */
    private Mono<String> write() {
        return Mono.fromSupplier(() -> {
            writes.incrementAndGet();
            return "saved";
        });
    }

    private Flux<String> fenced(FencePoint point, Object... args) {
        return guard.fence(point, args, this::write);
    }

    @Test
    void anAcceptedTokenRunsTheWriteOnceAndIsCountedAccepted() {
        StepVerifier.create(fenced(save).contextWrite(ReactiveFencing.bind(token(34))))
                .expectNext("saved").verifyComplete();

        assertThat(writes).hasValue(1);
        assertThat(store.maxSeen("accounts")).hasValue(34);
        assertThat(checks("accepted")).isEqualTo(1);
        assertThat(checks("stale")).isZero();
        assertThat(rejected).isEmpty();
    }

    @Test
    void aStaleTokenIsAnErrorSignalAndTheWriteIsNeverSubscribed() {
        fenced(save).contextWrite(ReactiveFencing.bind(token(34))).blockLast();
        writes.set(0);

        StepVerifier.create(fenced(save).contextWrite(ReactiveFencing.bind(token(33))))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StaleTokenException.class)
                        .hasMessageContaining("accounts").hasMessageContaining("33"))
                .verify();

        assertThat(writes).hasValue(0);
        assertThat(store.maxSeen("accounts")).hasValue(34);
        assertThat(checks("stale")).isEqualTo(1);
        assertThat(checks("accepted")).isEqualTo(1);
        assertThat(rejected).singleElement().satisfies(e -> assertThat(e.operation())
                .isEqualTo("AccountRepository.save(long)"));
    }

    @Test
    void noTokenIsAMissingTokenErrorSignal() {
        StepVerifier.create(fenced(save)).expectErrorSatisfies(e -> assertThat(e)
                .isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("contextWrite(ReactiveFencing.bind(token))") // the reactive way, not the thread's
                .hasMessageNotContaining("FencingContext.bind")).verify();

        assertThat(writes).hasValue(0);
        assertThat(checks("missing")).isEqualTo(1);
        assertThat(store.maxSeen("accounts")).isEmpty();
    }

    @Test
    void theMethodBodyRunsOnlyWhenSubscribedAndOncePerSubscription() {
        AtomicInteger bodies = new AtomicInteger();
        Flux<String> fenced = guard.fence(save, new Object[0], () -> {
            bodies.incrementAndGet();
            return write();
        });
        assertThat(bodies).hasValue(0);

        fenced.contextWrite(ReactiveFencing.bind(token(1))).blockLast();
        fenced.contextWrite(ReactiveFencing.bind(token(2))).blockLast();

        assertThat(bodies).hasValue(2);
        assertThat(writes).hasValue(2);
        assertThat(checks("accepted")).isEqualTo(2);
    }

    @Test
    void theTokenInTheReactorContextWinsOverTheOneOnTheAssemblingThread() {
        fenced(save).contextWrite(ReactiveFencing.bind(token(30))).blockLast();
        Flux<String> fenced;
        try (FencingScope ignored = FencingContext.bind(token(20))) { // stale: it would be refused
            fenced = fenced(save);
        }

        StepVerifier.create(fenced.contextWrite(ReactiveFencing.bind(token(31)))).expectNext("saved").verifyComplete();

        assertThat(store.maxSeen("accounts")).hasValue(31);
        assertThat(checks("stale")).isZero();
    }

    @Test
    void theTokenBoundOnTheAssemblingThreadIsUsedWhenTheContextHasNone() {
        Flux<String> fenced;
        try (FencingScope ignored = FencingContext.bind(token(7))) {
            fenced = fenced(save);
        }
        assertThat(FencingContext.current("accounts")).isNull();

        StepVerifier.create(fenced.subscribeOn(reactor.core.scheduler.Schedulers.parallel()))
                .expectNext("saved").verifyComplete();

        assertThat(store.maxSeen("accounts")).hasValue(7);
        assertThat(checks("accepted")).isEqualTo(1);
    }

    @Test
    void aFailingWriteIsCountedAcceptedAndItsErrorPassesThrough() {
        IllegalStateException boom = new IllegalStateException("disk full");
        Flux<String> fenced = guard.fence(save, new Object[0], () -> Mono.error(boom));

        StepVerifier.create(fenced.contextWrite(ReactiveFencing.bind(token(3)))).verifyErrorMatches(e -> e == boom);

        assertThat(checks("accepted")).isEqualTo(1);
        assertThat(store.maxSeen("accounts")).hasValue(3);
    }

    @Test
    void aKeyThatCannotBeEvaluatedIsAnInvalidKeyErrorSignal() {
        FencePoint keyed = new FencePoint("AccountRepository.save(Long)", "accounts", args -> args[0], "#id", false,
                metrics);

        StepVerifier.create(fenced(keyed, (Object) null).contextWrite(ReactiveFencing.bind(token(1))))
                .expectError(InvalidKeyException.class).verify();
        assertThat(checks("invalid")).isEqualTo(1);
        // a text no token can carry: invalid, not missing, with the control character shown escaped
        StepVerifier.create(fenced(keyed, "42\n").contextWrite(ReactiveFencing.bind(token(1))))
                .expectErrorMatches(e -> e instanceof InvalidKeyException && e.getMessage().contains("'42\\u000A'")
                        && !e.getMessage().contains("\n"))
                .verify();
        assertThat(checks("invalid")).isEqualTo(2);
        assertThat(checks("missing")).isZero();

        StepVerifier.create(fenced(keyed, 42L).contextWrite(ReactiveFencing.bind(
                        new FencingToken("accounts:42", 5, "h")))).expectNext("saved").verifyComplete();
        assertThat(store.maxSeen("accounts:42")).hasValue(5);
    }

    @Test
    void aForgedTokenNeverReachesTheStore() {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        TokenSigner signer = TokenSigner.hmac("k1", secret);
        ReactiveFenceGuard verifying = ReactiveFenceGuard.builder(store).rejectionListener(rejected::add)
                .verifier(new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", secret)))).build();

        StepVerifier.create(verifying.fence(save, new Object[0], this::write)
                        .contextWrite(ReactiveFencing.bind(token(9))))
                .expectError(ForgedTokenException.class).verify();
        assertThat(writes).hasValue(0);
        assertThat(store.maxSeen("accounts")).isEmpty();
        assertThat(checks("forged")).isEqualTo(1);
        assertThat(rejected).singleElement().isInstanceOf(ForgedTokenException.class);

        StepVerifier.create(verifying.fence(save, new Object[0], this::write)
                        .contextWrite(ReactiveFencing.bind(signer.sign(token(9)))))
                .expectNext("saved").verifyComplete();
        assertThat(store.maxSeen("accounts")).hasValue(9);
    }

    @Test
    void aRemoteTokenIsNeverSetAsideByAnAcquiringPoint() {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        ReactiveFenceGuard acquiring = ReactiveFenceGuard.builder(store)
                .issuer(ReactiveTokenIssuer.fromBlocking(issuer)).build();
        FencePoint transfer = new FencePoint("Transfers.run()", "accounts", null, null, true, metrics);

        StepVerifier.create(acquiring.fence(transfer, new Object[0], this::write)
                        .contextWrite(ReactiveFencing.bindRemote(Set.of(token(5)))))
                .expectError(RemoteTokenSetAsideException.class).verify();

        Flux<String> assembled;
        try (FencingScope ignored = FencingContext.bindRemote(Set.of(token(5)))) {
            assembled = acquiring.fence(transfer, new Object[0], this::write);
        }
        StepVerifier.create(assembled).expectError(RemoteTokenSetAsideException.class).verify();

        assertThat(writes).hasValue(0);
        assertThat(issuer.highestIssued("accounts")).isZero();
    }

    @Test
    void anAcquiringPointWithoutAnIssuerIsAConfigurationError() {
        FencePoint transfer = new FencePoint("Transfers.run()", "accounts", null, null, true, metrics);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> guard.validate(transfer))
                .hasMessageContaining("Transfers.run()").hasMessageContaining("ReactiveTokenIssuer");
        StepVerifier.create(guard.fence(transfer, new Object[0], this::write))
                .expectError(dev.fencing.FencingConfigurationException.class).verify();
    }

    @Test
    void aLocalTokenIsPropagatedByAnAcquiringPoint() {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        ReactiveFenceGuard acquiring = ReactiveFenceGuard.builder(store)
                .issuer(ReactiveTokenIssuer.fromBlocking(issuer)).build();
        FencePoint transfer = new FencePoint("Transfers.run()", "accounts", null, null, true, metrics);

        Flux<String> nested = acquiring.fence(transfer, new Object[0], () -> acquiring.fence(save, new Object[0],
                this::write));
        StepVerifier.create(nested.contextWrite(ReactiveFencing.bind(token(12)))).expectNext("saved")
                .verifyComplete();

        assertThat(store.maxSeen("accounts")).hasValue(12);
        assertThat(issuer.highestIssued("accounts")).isZero();
    }
}
