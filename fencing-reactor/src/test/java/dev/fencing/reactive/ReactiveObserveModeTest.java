package dev.fencing.reactive;

import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive guard in observe mode, as the blocking one: accepted advances max_seen; stale and missing run (stale
 * outside the fence, max_seen untouched) and are counted with {@code enforced=false}; a store error is signalled; a
 * switch to enforce is seen by the next subscription.
 */
class ReactiveObserveModeTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();
    private final FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("accounts", FenceMode.OBSERVE));
    private final ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store).modes(modes).build();
    private final FencePoint save = new FencePoint("Accounts.save()", "accounts", null, null, false,
            new FencingMetrics(registry));
    private final AtomicInteger writes = new AtomicInteger();

    private Flux<String> write(FencingToken token) {
        Flux<String> fenced = guard.fence(save, new Object[0], () -> Mono.fromSupplier(() -> {
            writes.incrementAndGet();
            return "done";
        }));
        return token == null ? fenced : fenced.contextWrite(ReactiveFencing.bind(token));
    }

    private double count(String outcome, String enforced) {
        var counter = registry.find(FencingMetrics.CHECKS).tag("outcome", outcome).tag("enforced", enforced)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void staleAndMissingRunUncountedAsRefusalsAndASwitchToEnforceRefusesTheNext() {
        StepVerifier.create(write(new FencingToken("accounts", 9, "a"))).expectNext("done").verifyComplete();
        StepVerifier.create(write(new FencingToken("accounts", 6, "zombie"))).expectNext("done").verifyComplete();
        StepVerifier.create(write(null)).expectNext("done").verifyComplete();

        assertThat(writes).hasValue(3);
        assertThat(store.maxSeen("accounts")).hasValue(9);
        assertThat(count("accepted", "false")).isEqualTo(1);
        assertThat(count("stale", "false")).isEqualTo(1);
        assertThat(count("missing", "false")).isEqualTo(1);
        assertThat(modes.observed().withoutToken()).singleElement()
                .satisfies(call -> assertThat(call.operation()).isEqualTo("Accounts.save()"));

        modes.set("accounts", FenceMode.ENFORCE, "test");
        StepVerifier.create(write(new FencingToken("accounts", 7, "zombie"))).expectError(StaleTokenException.class)
                .verify();
        StepVerifier.create(write(null)).expectError(MissingTokenException.class).verify();
        assertThat(writes).hasValue(3);
        assertThat(count("stale", "true")).isEqualTo(1);
    }

    @Test
    void anInvalidKeyRunsCountedAsObservedAndIsRefusedOnceEnforced() {
        FencePoint keyed = new FencePoint("Accounts.save(Account)", "accounts", args -> args[0], "#account.id", false,
                new FencingMetrics(registry));
        java.util.function.Supplier<Flux<String>> insert = () -> guard.fence(keyed, new Object[] {null},
                () -> Mono.fromSupplier(() -> {
                    writes.incrementAndGet();
                    return "inserted";
                }));
        StepVerifier.create(insert.get()).expectNext("inserted").verifyComplete();
        assertThat(count("invalid", "false")).isEqualTo(1);
        assertThat(modes.observed().calls()).singleElement().satisfies(call -> assertThat(call.count("invalid"))
                .isEqualTo(1));

        modes.set("accounts", FenceMode.ENFORCE, "test");
        StepVerifier.create(insert.get()).expectError(dev.fencing.guard.InvalidKeyException.class).verify();
        assertThat(writes).hasValue(1);
        assertThat(count("invalid", "true")).isEqualTo(1);
    }

    @Test
    void aStoreErrorIsSignalledInObserveMode() {
        ReactiveFenceStore failing = new ReactiveFenceStore() {
            @Override
            public <T> Flux<T> fence(String resource, FencingToken token, Flux<T> write) {
                return Flux.error(new FenceStoreException(resource, token, "database down", null));
            }
        };
        ReactiveFenceGuard failingGuard = ReactiveFenceGuard.builder(failing).modes(modes).build();
        StepVerifier.create(failingGuard.fence(save, new Object[0], () -> Mono.fromSupplier(() -> {
                    writes.incrementAndGet();
                    return "done";
                })).contextWrite(ReactiveFencing.bind(new FencingToken("accounts", 3, "a"))))
                .expectErrorMessage("database down").verify();
        assertThat(writes).hasValue(0);
        assertThat(count("error", "false")).isEqualTo(1);
    }
}
