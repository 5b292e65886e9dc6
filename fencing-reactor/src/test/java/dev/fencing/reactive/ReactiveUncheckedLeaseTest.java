package dev.fencing.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reactive acquiring call whose token no check presented is counted in {@code fencing.leases.unchecked} when it
 * completes; a check in its chain, or a thread-bound lock's check in a reactive chain it propagates into, counts.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReactiveUncheckedLeaseTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store)
            .issuer(ReactiveTokenIssuer.fromBlocking(issuer)).acquireTimeout(Duration.ofSeconds(5)).build();
    private final FencePoint transfer = new FencePoint("Transfers.run()", "accounts", null, null, true, metrics);
    private final FencePoint save = new FencePoint("AccountRepository.save()", "accounts", null, null, false, metrics);

    private double unchecked() {
        var counter = registry.find(FencingMetrics.UNCHECKED_LEASES).tag("resource", "accounts").counter();
        return counter == null ? -1 : counter.count();
    }

    @Test
    void aCallWithoutACheckIsCountedWhenItCompletes() {
        StepVerifier.create(guard.fence(transfer, new Object[0], () -> Mono.just("unfenced")))
                .expectNext("unfenced").verifyComplete();
        assertThat(unchecked()).isEqualTo(1); // counted before the subscriber heard the call complete
        assertThat(issuer.isHeld("accounts")).isFalse();
    }

    @Test
    void aCheckInTheChainCounts() {
        StepVerifier.create(guard.fence(transfer, new Object[0],
                        () -> guard.fence(save, new Object[0], () -> Mono.just("saved"))))
                .expectNext("saved").verifyComplete();
        Polling.until(() -> !issuer.isHeld("accounts"));
        assertThat(unchecked()).isZero();
    }

    @Test
    void aFailedCallIsNotCounted() {
        StepVerifier.create(guard.fence(transfer, new Object[0], () -> Mono.error(new IllegalStateException("boom"))))
                .expectErrorMessage("boom").verify();
        Polling.until(() -> !issuer.isHeld("accounts"));
        assertThat(unchecked()).isZero();
    }

    @Test
    void theAcquiredTokenBoundByHandIntoTheContextKeepsItsUse() {
        StepVerifier.create(guard.fence(transfer, new Object[0], () -> Mono.deferContextual(context -> {
                    FencingToken mine = ReactiveFencing.current(context, "accounts");
                    return Mono.from(guard.fence(save, new Object[0], () -> Mono.just("saved")))
                            .contextWrite(ReactiveFencing.bind(mine)); // the README's way to bind a token
                }))).expectNext("saved").verifyComplete();
        Polling.until(() -> !issuer.isHeld("accounts"));
        assertThat(unchecked()).isZero();
    }

    @Test
    void aReleaseThatThrowsStillClosesTheUse() {
        ReactiveTokenIssuer base = ReactiveTokenIssuer.fromBlocking(issuer);
        ReactiveTokenIssuer throwing = new ReactiveTokenIssuer() {
            @Override
            public Mono<dev.fencing.issuer.Lease> acquire(String resource, Duration timeout) {
                return base.acquire(resource, timeout);
            }

            @Override
            public Mono<Void> release(dev.fencing.issuer.Lease lease) {
                lease.close();
                throw new IllegalStateException("a release that throws instead of signalling");
            }
        };
        ReactiveFenceGuard throwingGuard = ReactiveFenceGuard.builder(store).issuer(throwing)
                .acquireTimeout(Duration.ofSeconds(5)).build();
        java.util.List<FencingToken> tokens = new java.util.concurrent.CopyOnWriteArrayList<>();
        StepVerifier.create(throwingGuard.fence(transfer, new Object[0], () -> Mono.deferContextual(context -> {
            tokens.add(ReactiveFencing.current(context, "accounts"));
            return Mono.just("done");
        }))).expectNext("done").verifyComplete();
        StepVerifier.create(throwingGuard.fence(transfer, new Object[0], () -> Mono.deferContextual(context -> {
            tokens.add(ReactiveFencing.current(context, "accounts"));
            return Mono.error(new IllegalStateException("boom"));
        }))).expectErrorMessage("boom").verify();

        assertThat(tokens).hasSize(2);
        for (FencingToken token : tokens) {   // a plain bind of the token finds no open use: the registry let go
            try (FencingScope ignored = FencingContext.bind(token)) {
                assertThat(FencingContext.snapshot().useOf("accounts")).as("use of %s", token).isNull();
            }
        }
    }

    @Test
    void aThreadBoundLockPropagatedIntoAReactiveChainIsMarkedByItsCheck() {
        TokenUse use = new TokenUse();
        try (FencingScope ignored = FencingContext.bindAcquired(new FencingToken("accounts", 1, "h"), use)) {
            Flux<String> chain = guard.fence(transfer, new Object[0], // propagates the thread's lock
                    () -> guard.fence(save, new Object[0], () -> Mono.just("saved")));
            assertThat(use.isUsed()).isFalse(); // assembled, not yet run
            StepVerifier.create(chain).expectNext("saved").verifyComplete();
        }
        assertThat(use.isUsed()).isTrue();
        assertThat(issuer.highestIssued("accounts")).isZero(); // nothing was acquired
    }
}
