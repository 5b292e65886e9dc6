package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FenceGuardTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double checks(String resource, String outcome) {
        var c = registry.find("fencing.checks").tag("resource", resource).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    private double acquisitions(String resource, String outcome) {
        var c = registry.find("fencing.acquisitions").tag("resource", resource).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    private FencePoint repo(String resource) {
        return new FencePoint("Repo.write(String)", resource, null, null, false, metrics);
    }

    private FencePoint service(String resource) {
        return new FencePoint("Service.transfer()", resource, null, null, true, metrics);
    }

    @Test
    void theCanonicalRace() throws Throwable {
        // t0 Client1 acquires 33 (max_seen 32); t1 Client1 pauses; t3 Client2 acquires 34;
        // t4 Client2 writes with 34: ACCEPT, max_seen 34; t6 Client1 writes with 33: REJECT, by its own process (which
        // knows the lease ran out) and, presented as another process would present it, by the store
        store.raiseFloor("res", 32);
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofMillis(100), 32);
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(10));
        FencePoint service = service("res");
        FencePoint repo = repo("res");
        AtomicReference<String> data = new AtomicReference<>("initial");
        List<String> trace = new ArrayList<>();

        CountDownLatch client1Acquired = new CountDownLatch(1);
        CountDownLatch client1Wakes = new CountDownLatch(1);
        Throwable[] knownLost = new Throwable[1];
        CompletableFuture<Throwable> client1 = CompletableFuture.supplyAsync(() -> {
            try {
                guard.invoke(service, new Object[0], () -> {
                    FencingToken held = FencingContext.current("res");
                    synchronized (trace) {
                        trace.add("t0 client1 acquired " + held.value());
                    }
                    client1Acquired.countDown();
                    client1Wakes.await(); // t1: the long GC pause; the lease expires meanwhile
                    try {
                        guard.invoke(repo, new Object[] {"Y"}, () -> {
                            data.set("Y");
                            return null;
                        });
                    } catch (StaleTokenException e) {
                        knownLost[0] = e;
                    }
                    // the same token as a process that does not know its lease is lost presents it (a remote binding
                    // carries no lease): the store decides
                    try (var remote = FencingContext.bindRemote(List.of(held))) {
                        return guard.invoke(repo, new Object[] {"Y"}, () -> {
                            data.set("Y");
                            return null;
                        });
                    }
                });
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertThat(client1Acquired.await(10, TimeUnit.SECONDS)).isTrue();

        // t3: Client2 waits until the lock service hands the lock over (lease of 33 expired), gets 34, writes X
        guard.invoke(service, new Object[0], () -> {
            FencingToken token = FencingContext.current("res");
            synchronized (trace) {
                trace.add("t3 client2 acquired " + token.value());
            }
            return guard.invoke(repo, new Object[] {"X"}, () -> {
                data.set("X");
                return null;
            });
        });
        assertThat(store.maxSeen("res")).hasValue(34);

        client1Wakes.countDown(); // t5: Client1 wakes, unaware
        Throwable rejected = client1.get(10, TimeUnit.SECONDS);

        assertThat(trace).containsExactly("t0 client1 acquired 33", "t3 client2 acquired 34");
        assertThat(knownLost[0]).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.lockLost()).isTrue();
            assertThat(e.presented().value()).isEqualTo(33);
            assertThat(e.operation()).isEqualTo("Repo.write(String)");
        });
        assertThat(rejected).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.lockLost()).isFalse();
            assertThat(e.presented().value()).isEqualTo(33);
            assertThat(e.maxSeen()).isEqualTo(34);
            assertThat(e.resource()).isEqualTo("res");
            assertThat(e.verdict()).isEqualTo(Verdict.REJECT_STALE);
            assertThat(e.operation()).isEqualTo("Repo.write(String)");
            assertThat(e.getMessage()).contains("Repo.write(String)", "33", "34");
        });
        assertThat(data.get()).isEqualTo("X");
        assertThat(checks("res", "accepted")).isEqualTo(1);
        assertThat(checks("res", "stale")).isEqualTo(2);
        assertThat(checks("res", "missing")).isZero();
        assertThat(acquisitions("res", "acquired")).isEqualTo(2);
    }

    @Test
    void everyRowOfTheRuleThroughTheGuard() throws Throwable {
        FenceGuard guard = new FenceGuard(store);
        FencePoint repo = repo("r");
        List<String> applied = new ArrayList<>();
        FencingToken t33 = new FencingToken("r", 33, "lease-a");
        FencingToken t34 = new FencingToken("r", 34, "lease-b");
        FencingToken t34other = new FencingToken("r", 34, "lease-c");

        bound(t33, () -> guard.invoke(repo, new Object[0], () -> applied.add("33")));      // newer
        bound(t34, () -> guard.invoke(repo, new Object[0], () -> applied.add("34")));      // newer
        bound(t34, () -> guard.invoke(repo, new Object[0], () -> applied.add("34 again"))); // same holder
        assertThatThrownBy(() -> bound(t34other,
                () -> guard.invoke(repo, new Object[0], () -> applied.add("34 other"))))
                .isInstanceOfSatisfying(DuplicateTokenException.class,
                        e -> assertThat(e.verdict()).isEqualTo(Verdict.REJECT_DUPLICATE));          // duplicate
        assertThatThrownBy(() -> bound(t33,
                () -> guard.invoke(repo, new Object[0], () -> applied.add("33 zombie"))))
                .isInstanceOf(StaleTokenException.class);                                          // stale
        assertThatThrownBy(() -> guard.invoke(repo, new Object[0], () -> applied.add("no token")))
                .isInstanceOfSatisfying(MissingTokenException.class, e -> {
                    assertThat(e.resource()).isEqualTo("r");
                    assertThat(e.getMessage()).contains("Repo.write(String)");
                });                                                                                    // missing

        assertThat(applied).containsExactly("33", "34", "34 again");
        assertThat(checks("r", "accepted")).isEqualTo(3);
        assertThat(checks("r", "duplicate")).isEqualTo(1);
        assertThat(checks("r", "stale")).isEqualTo(1);
        assertThat(checks("r", "missing")).isEqualTo(1);
    }

    @Test
    void aTokenForAnotherResourceDoesNotCount() {
        FenceGuard guard = new FenceGuard(store);
        FencingContext.run(new FencingToken("other", 99, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> "x"))
                        .isInstanceOf(MissingTokenException.class)
                        .hasMessageContaining("tokens are bound here only for 'other'")); // points at the typo
        assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> "x"))
                .isInstanceOf(MissingTokenException.class).message().doesNotContain("bound here")
                // every way to bind one: in process, and from a caller in another process
                .contains("FencingContext.bind(...)", "@Fenced(acquire = true)", "Fencing-Token header");
    }

    @Test
    void plainFencedNeverAcquiresEvenWithAnIssuer() {
        CountingIssuer issuer = new CountingIssuer();
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(1));
        assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> "x"))
                .isInstanceOf(MissingTokenException.class);
        assertThat(issuer.acquired).isZero();
    }

    @Test
    void acquiringPointBindsForTheCallAndReleasesAfterwards() throws Throwable {
        CountingIssuer issuer = new CountingIssuer();
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(1));
        FencingToken inside = guard.invoke(service("r"), new Object[0], () -> FencingContext.current("r"));
        assertThat(inside).isNotNull();
        assertThat(inside.resource()).isEqualTo("r");
        assertThat(issuer.acquired).isEqualTo(1);
        assertThat(issuer.released).isEqualTo(1);
        assertThat(FencingContext.current("r")).isNull();
        assertThat(acquisitions("r", "acquired")).isEqualTo(1);
    }

    @Test
    void acquiringPointPropagatesABoundToken() throws Throwable {
        CountingIssuer issuer = new CountingIssuer();
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(1));
        FencingToken outer = new FencingToken("r", 5, "outer");
        FencingToken seen = bound(outer,
                () -> guard.invoke(service("r"), new Object[0], () -> FencingContext.current("r")));
        assertThat(seen).isSameAs(outer);
        assertThat(issuer.acquired).isZero();
    }

    @Test
    void exceptionInsideTheGuardedMethodReleasesAndUnbinds() {
        CountingIssuer issuer = new CountingIssuer();
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(1));
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> guard.invoke(service("r"), new Object[0], () -> {
            throw boom;
        })).isSameAs(boom);
        assertThat(issuer.released).isEqualTo(1);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void exceptionInsideACheckedMethodIsCountedAsAcceptedAndPassesThrough() {
        FenceGuard guard = new FenceGuard(store);
        IllegalStateException boom = new IllegalStateException("boom");
        FencingContext.run(new FencingToken("r", 3, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> {
                    throw boom;
                })).isSameAs(boom));
        assertThat(checks("r", "accepted")).isEqualTo(1);
        assertThat(store.maxSeen("r")).hasValue(3);
    }

    @Test
    void aRejectionInANestedFenceIsCountedOnceWhereItHappened() {
        FenceGuard guard = new FenceGuard(store);
        store.raiseFloor("inner", 100);
        FencingToken outer = new FencingToken("outer", 1, "h");
        FencingToken inner = new FencingToken("inner", 50, "h");
        try (FencingScope ignored = FencingContext.bind(outer, inner)) {
            assertThatThrownBy(() -> guard.invoke(repo("outer"), new Object[0],
                    () -> guard.invoke(repo("inner"), new Object[0], () -> "never")))
                    .isInstanceOfSatisfying(StaleTokenException.class,
                            e -> assertThat(e.resource()).isEqualTo("inner"));
        }
        assertThat(checks("inner", "stale")).isEqualTo(1);
        assertThat(checks("outer", "stale")).isZero();
        assertThat(checks("outer", "accepted")).isEqualTo(1);
    }

    @Test
    void failedAcquireIsCountedAndNothingRuns() {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofMinutes(1), 0);
        Lease held = issuer.acquire("r", Duration.ZERO);
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofMillis(20));
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(service("r"), new Object[0], () -> ran.add("x")))
                .isInstanceOf(LockAcquisitionException.class);
        assertThat(ran).isEmpty();
        assertThat(acquisitions("r", "failed")).isEqualTo(1);
        held.close();
    }

    @Test
    void acquiringWithoutAnIssuerIsAConfigurationError() {
        FenceGuard guard = new FenceGuard(store);
        FencePoint point = service("r");
        assertThatThrownBy(() -> guard.validate(point))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Service.transfer()").hasMessageContaining("TokenIssuer");
    }

    @Test
    void blankResourceIsAConfigurationErrorNamingTheMethod() {
        assertThatThrownBy(() -> new FencePoint("Repo.save(Account)", " ", null, null, false, metrics))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repo.save(Account)");
    }

    /**
     * A resource that looks like another one (whitespace at an end, an invisible character) or that no token could
     * carry (a control character: every call failed, none at startup) is a configuration error naming the method.
     */
    @Test
    void aResourceWithACharacterNoReaderSeesIsAConfigurationError() {
        for (String name : List.of("orders ", " orders", "orders\u00a0", "orders\u200b", "ord\u200bers",
                "ord\u00a0ers", "ord\u202eers", "orders\ufeff", "ord\u2007ers", "ord\ters")) {
            assertThatThrownBy(() -> new FencePoint("Repo.save(Account)", name, null, null, false, metrics))
                    .as(FencingToken.printable(name))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Repo.save(Account)").hasMessageContaining("remove");
        }
        assertThatThrownBy(() -> new FencePoint("Repo.save(Account)", "orders\n", null, null, false, metrics))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("'orders\\u000A'")
                .hasMessageContaining("control character");
        assertThatThrownBy(() -> new FencePoint("Repo.save(Account)", "orders\ud800", null, null, false, metrics))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("unpaired UTF-16 surrogate");
        for (String name : List.of("order lines", "caf\u00e9", "cafe\u0301", "\ud83d\udce6-parcels",
                "\u0645\u0644\u0641")) {
            assertThatCode(() -> new FencePoint("Repo.save(Account)", name, null, null, false, metrics))
                    .as(name).doesNotThrowAnyException();
        }
    }

    @Test
    void keyNarrowsTheFenceToOneEntity() throws Throwable {
        FenceGuard guard = new FenceGuard(store);
        FencePoint point = new FencePoint("Repo.save(long)", "accounts", args -> args[0], "#id", false, metrics);
        FencingToken t42 = new FencingToken("accounts:42", 7, "h");
        String result = bound(t42, () -> guard.invoke(point, new Object[] {42L}, () -> "saved"));
        assertThat(result).isEqualTo("saved");
        assertThat(store.maxSeen("accounts:42")).hasValue(7);
        assertThat(store.maxSeen("accounts")).isEmpty();
        // a token for entity 42 does not open entity 43
        assertThatThrownBy(() -> bound(t42, () -> guard.invoke(point, new Object[] {43L}, () -> "x")))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("accounts:43");
        // the counter is tagged with the static resource, never the entity
        assertThat(checks("accounts", "accepted")).isEqualTo(1);
        assertThat(registry.find("fencing.checks").tag("resource", "accounts:42").counter()).isNull();
    }

    @Test
    void nullKeyRefusesTheCall() {
        FenceGuard guard = new FenceGuard(store);
        FencePoint point = new FencePoint("Repo.save(Long)", "accounts", args -> args[0], "#id", false, metrics);
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {null}, () -> "x"))
                .isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("#id").hasMessageContaining("Repo.save(Long)");
        assertThat(checks("accounts", "invalid")).isEqualTo(1);
        assertThat(checks("accounts", "missing")).isZero();
    }

    @Test
    void aKeyThatCannotBeEvaluatedIsInvalidNotMissing() {
        FenceGuard guard = new FenceGuard(store);
        FencePoint point = new FencePoint("Repo.save(Order)", "accounts", args -> {
            throw new IllegalStateException("no property 'id'");
        }, "#order.id", false, metrics);
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {"o"}, () -> ran.add("x")))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("Repo.save(Order)")
                .hasMessageContaining("'#order.id'").hasMessageContaining("no property 'id'");
        assertThat(ran).isEmpty();
        assertThat(checks("accounts", "invalid")).isEqualTo(1);
        assertThat(checks("accounts", "missing")).isZero();
    }

    // ---- item 2: the 256-character limit of an effective resource

    @Test
    void anEffectiveResourceAtTheLimitIsFencedOneCharacterMoreIsRefusedBeforeTheStore() throws Throwable {
        FenceGuard guard = new FenceGuard(store);
        FencePoint point = new FencePoint("Repo.save(String)", "accounts", args -> args[0], "#id", false, metrics);
        String fits = "k".repeat(FencingToken.MAX_PART_LENGTH - "accounts:".length());
        FencingToken token = new FencingToken("accounts:" + fits, 1, "h");
        assertThat(bound(token, () -> guard.invoke(point, new Object[] {fits}, () -> "saved"))).isEqualTo("saved");

        String tooLong = fits + "k";
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {tooLong}, () -> ran.add("x")))
                .isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("Repo.save(String)").hasMessageContaining("'accounts:")
                .hasMessageContaining(String.valueOf(FencingToken.MAX_PART_LENGTH + 1))
                .hasMessageContaining(String.valueOf(FencingToken.MAX_PART_LENGTH))
                .hasMessageNotContaining(tooLong);
        assertThat(ran).isEmpty();
        assertThat(store.size()).isEqualTo(1); // only the accepted resource: nothing reached the store
        assertThat(checks("accounts", "invalid")).isEqualTo(1);
    }

    @Test
    void anOversizedKeyWithAcquireNeverReachesTheIssuer() {
        CountingIssuer issuer = new CountingIssuer();
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(1));
        FencePoint point = new FencePoint("Service.open(String)", "accounts", args -> args[0], "#id", true, metrics);
        String huge = "x".repeat(10_000);
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {huge}, () -> ran.add("x")))
                .isInstanceOfSatisfying(InvalidKeyException.class, e -> {
                    assertThat(e.getMessage()).contains("Service.open(String)", "#id", "10009",
                            String.valueOf(FencingToken.MAX_PART_LENGTH));
                    assertThat(e.getMessage().length()).isLessThan(1_000); // the value is not dumped
                });
        assertThat(ran).isEmpty();
        assertThat(issuer.acquired).isZero();
        assertThat(checks("accounts", "invalid")).isEqualTo(1);
        assertThat(acquisitions("accounts", "failed")).isZero();
    }

    @Test
    void aResourceLongerThanTheLimitIsAConfigurationError() {
        String limit = "r".repeat(FencingToken.MAX_PART_LENGTH);
        assertThat(new FencePoint("Repo.x()", limit, null, null, false, metrics).resource()).isEqualTo(limit);
        assertThatThrownBy(() -> new FencePoint("Repo.x()", limit + "r", null, null, false, metrics))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("Repo.x()")
                .hasMessageContaining(String.valueOf(FencingToken.MAX_PART_LENGTH + 1))
                .hasMessageContaining(String.valueOf(FencingToken.MAX_PART_LENGTH));
        // with a key, ':' and at least one key character must fit as well
        assertThatThrownBy(() -> new FencePoint("Repo.y(long)", limit.substring(1), args -> args[0], "#id", false,
                metrics)).isInstanceOf(FencingConfigurationException.class).hasMessageContaining("Repo.y(long)");
    }

    // ---- item 7: accepted only once the write started

    @Test
    void aRoutingStoreWithoutARouteIsAnErrorNamingTheMethodNotAnAcceptance() {
        FenceGuard guard = new FenceGuard(RoutingFenceStore.builder().route("ledger", store).build());
        List<String> ran = new ArrayList<>();
        FencingContext.run(new FencingToken("accounts", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("accounts"), new Object[0], () -> ran.add("x")))
                        .isInstanceOfSatisfying(FenceStoreException.class, e -> {
                            assertThat(e.resource()).isEqualTo("accounts");
                            assertThat(e.getMessage()).contains("Repo.write(String)", "'accounts'", "No fence store");
                            assertThat(e.getCause()).isInstanceOf(IllegalArgumentException.class);
                        }));
        assertThat(ran).isEmpty();
        assertThat(checks("accounts", "error")).isEqualTo(1);
        assertThat(checks("accounts", "accepted")).isZero();
    }

    @Test
    void aStoreThatReturnsWithoutRunningTheWriteFailsClosed() {
        FenceGuard guard = new FenceGuard(new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
                return null; // forgot the write
            }
        });
        FencingContext.run(new FencingToken("r", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> "written"))
                        .isInstanceOf(FenceStoreException.class).hasMessageContaining("Repo.write(String)"));
        assertThat(checks("r", "error")).isEqualTo(1);
        assertThat(checks("r", "accepted")).isZero();
    }

    /**
     * An enforced refusal is logged, at most once per method and outcome per minute (a rollout trial found the
     * zombie's lost-lease line in the log but not its refusal); an observed one is left to observe mode's own line.
     */
    @Test
    void anEnforcedRefusalIsLoggedOncePerMethodAndOutcomePerMinute() throws Throwable {
        String operation = "Repo.refusedLogged" + System.nanoTime() + "(String)";
        FencePoint point = new FencePoint(operation, "logged", null, null, false, metrics);
        FenceGuard guard = new FenceGuard(store);
        FencingContext.run(new FencingToken("logged", 9, "new"), () -> {
            try {
                guard.invoke(point, new Object[0], () -> "x");
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        });
        try (dev.fencing.LogCapture log = dev.fencing.LogCapture.of(RefusalLog.class)) {
            for (int i = 0; i < 3; i++) {
                FencingContext.run(new FencingToken("logged", 5, "zombie"), () ->
                        assertThatThrownBy(() -> guard.invoke(point, new Object[0], () -> "x"))
                                .isInstanceOf(StaleTokenException.class));
            }
            assertThat(log.records()).hasSize(1);
            assertThat(log.records().get(0).getLevel()).isEqualTo(java.util.logging.Level.WARNING);
            assertThat(java.text.MessageFormat.format(log.records().get(0).getMessage(),
                    log.records().get(0).getParameters())).contains("Refused " + operation + " (stale)")
                    .contains("'logged'").contains("token 5, max_seen 9");
        }
        assertThat(checks("logged", "stale")).isEqualTo(3);
    }

    /**
     * A call refused for want of a token is logged as well, once per method a minute: its exception may end where no
     * one reads it (a red-team trial's task handed to runAsync and never joined dropped its write with no line).
     */
    @Test
    void aMissingTokenIsLoggedOncePerMethodPerMinute() throws Throwable {
        String operation = "Repo.missingLogged" + System.nanoTime() + "(String)";
        FencePoint point = new FencePoint(operation, "unbound", null, null, false, metrics);
        FenceGuard guard = new FenceGuard(store);
        try (dev.fencing.LogCapture log = dev.fencing.LogCapture.of(RefusalLog.class)) {
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> guard.invoke(point, new Object[0], () -> "x"))
                        .isInstanceOf(MissingTokenException.class);
            }
            assertThat(log.records()).singleElement().satisfies(r -> {
                assertThat(r.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
                assertThat(java.text.MessageFormat.format(r.getMessage(), r.getParameters()))
                        .contains("Refused " + operation + " (missing) on resource 'unbound'")
                        .contains("(thread " + Thread.currentThread().getName() + ")")
                        .contains("fencing.checks{outcome=\"missing\"}");
            });
        }
        assertThat(checks("unbound", "missing")).isEqualTo(3);
        // a keyed point's line names the entity's resource, as its exception does (it named the base, 'unbound')
        FencePoint keyed = new FencePoint(operation + "#keyed", "unbound", args -> args[0], "#p0", false, metrics);
        try (dev.fencing.LogCapture log = dev.fencing.LogCapture.of(RefusalLog.class)) {
            assertThatThrownBy(() -> guard.invoke(keyed, new Object[] {"8"}, () -> "x"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("'unbound:8'");
            assertThat(log.records()).singleElement().satisfies(r -> assertThat(java.text.MessageFormat.format(
                    r.getMessage(), r.getParameters())).contains("(missing) on resource 'unbound:8'"));
        }
    }

    /** A check outside the store's transaction is a setup mistake: the refusal names the method to fix. */
    @Test
    void aRefusalOutsideTheStoresTransactionNamesTheMethod() {
        FenceGuard guard = new FenceGuard(new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
                throw new dev.fencing.store.OutsideTransactionException(resource, token, "Fence check refused: "
                        + "another manager's transaction");
            }
        });
        FencingContext.run(new FencingToken("r", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> "written"))
                        .isInstanceOf(dev.fencing.store.OutsideTransactionException.class)
                        .hasMessage("Repo.write(String): Fence check refused: another manager's transaction"));
        assertThat(checks("r", "error")).isEqualTo(1);
    }

    @Test
    void aStoreFailureAfterTheWriteStartedThatIsNotAVerdictStaysAnAcceptance() {
        // a store that runs the write and then fails in its own bookkeeping with a foreign exception: the write ran
        IllegalStateException late = new IllegalStateException("after the write");
        FenceGuard guard = new FenceGuard(new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                write.proceed();
                throw late;
            }
        });
        FencingContext.run(new FencingToken("r", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> "written")).isSameAs(late));
        assertThat(checks("r", "accepted")).isEqualTo(1);
        assertThat(checks("r", "error")).isZero();
    }

    @Test
    void aTransientStoreFailureIsStillCountedBusyOrConflict() {
        class Busy extends FenceStoreException implements TransientFenceFailure {
            Busy(String resource, FencingToken token) {
                super(resource, token, "lock wait bound", null);
            }

            @Override
            public Reason reason() {
                return Reason.BUSY;
            }
        }
        FenceGuard guard = new FenceGuard(new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
                throw new Busy(resource, token);
            }
        });
        FencingContext.run(new FencingToken("r", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> "x")).isInstanceOf(Busy.class));
        assertThat(checks("r", "busy")).isEqualTo(1);
        assertThat(checks("r", "error") + checks("r", "accepted")).isZero();
    }

    @Test
    void deeplyNestedChecksEachCountTheirOwnVerdict() throws Throwable {
        FenceGuard guard = new FenceGuard(store);
        int depth = 9;
        List<FencingToken> tokens = new ArrayList<>();
        for (int i = 0; i < depth; i++) {
            tokens.add(new FencingToken("n" + i, 1, "h"));
        }
        store.raiseFloor("n" + (depth - 1), 5); // the innermost check rejects
        List<String> ran = new ArrayList<>();
        try (FencingScope ignored = FencingContext.bind(tokens)) {
            assertThatThrownBy(() -> nest(guard, 0, depth, ran)).isInstanceOfSatisfying(StaleTokenException.class,
                    e -> assertThat(e.resource()).isEqualTo("n" + (depth - 1)));
        }
        assertThat(ran).hasSize(depth - 1);
        for (int i = 0; i < depth - 1; i++) {
            assertThat(checks("n" + i, "accepted")).as("n" + i).isEqualTo(1);
            assertThat(checks("n" + i, "error") + checks("n" + i, "stale")).as("n" + i).isZero();
        }
        assertThat(checks("n" + (depth - 1), "stale")).isEqualTo(1);
        // and the thread's frames are usable again afterwards
        assertThat(bound(new FencingToken("after", 1, "h"), () -> guard.invoke(repo("after"), new Object[0],
                () -> "ok"))).isEqualTo("ok");
        assertThat(checks("after", "accepted")).isEqualTo(1);
    }

    private Object nest(FenceGuard guard, int level, int depth, List<String> ran) throws Throwable {
        return guard.invoke(repo("n" + level), new Object[0], () -> {
            ran.add("n" + level);
            return level + 1 < depth ? nest(guard, level + 1, depth, ran) : "innermost";
        });
    }

    @Test
    void aStoreThatKeptTheWriteCannotRunItAfterTheCheckReturned() throws Throwable {
        List<FencedCall<?>> kept = new ArrayList<>();
        List<String> ran = new ArrayList<>();
        FenceGuard guard = new FenceGuard(new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                kept.add(write);
                return "runs".equals(resource) ? write.proceed() : null;
            }
        });
        // the first check's store ran the write and kept it; the second kept it without running it (fails closed)
        assertThat(bound(new FencingToken("runs", 1, "h"),
                () -> guard.invoke(repo("runs"), new Object[0], () -> ran.add("runs")))).isEqualTo(true);
        FencingContext.run(new FencingToken("later", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("later"), new Object[0], () -> ran.add("later")))
                        .isInstanceOf(FenceStoreException.class));
        assertThat(ran).containsExactly("runs");
        assertThat(kept).hasSize(2);
        for (FencedCall<?> write : kept) {
            assertThatThrownBy(write::proceed).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("after its check returned");
        }
        assertThat(ran).containsExactly("runs");
        assertThat(checks("runs", "accepted")).isEqualTo(1);
        assertThat(checks("later", "error")).isEqualTo(1);
        assertThat(checks("later", "accepted")).isZero();
    }

    @Test
    void theGuardKeepsNoPerThreadState() throws Exception {
        // a ThreadLocal holding guard classes that outlives a fenced call pins the application's class loader on a
        // container's pooled threads: the guard keeps its per-call state on the stack instead
        java.net.URL classes = FenceGuard.class.getResource("FenceGuard.class");
        assertThat(classes).isNotNull();
        assertThat(classes.getProtocol()).as("tests run against target/classes").isEqualTo("file");
        java.io.File[] files = new java.io.File(classes.toURI()).getParentFile()
                .listFiles((dir, name) -> name.endsWith(".class"));
        assertThat(files).isNotEmpty();
        for (java.io.File file : files) {
            String name = file.getName();
            Class<?> type = Class.forName(FenceGuard.class.getPackageName() + "."
                    + name.substring(0, name.length() - ".class".length()), false, FenceGuard.class.getClassLoader());
            for (java.lang.reflect.Field field : type.getDeclaredFields()) {
                assertThat(ThreadLocal.class.isAssignableFrom(field.getType())).as(field.toString()).isFalse();
            }
        }
    }

    // ---- item 14: issuer failures name the method and resource

    @Test
    void anIssuerFailureThatIsNotALibraryExceptionIsWrappedNamingMethodAndResource() {
        IllegalArgumentException raw = new IllegalArgumentException("resource too long for the lock path");
        TokenIssuer failing = new TokenIssuer() {
            @Override
            public Lease acquire(String resource, Duration timeout) {
                throw raw;
            }

        };
        FenceGuard guard = new FenceGuard(store, failing, Duration.ofSeconds(1));
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(service("ledger"), new Object[0], () -> ran.add("x")))
                .isInstanceOfSatisfying(LockAcquisitionException.class, e -> {
                    assertThat(e.resource()).isEqualTo("ledger");
                    assertThat(e.getMessage()).contains("Service.transfer()", "'ledger'", raw.getMessage());
                    assertThat(e.getCause()).isSameAs(raw);
                });
        assertThat(ran).isEmpty();
        assertThat(acquisitions("ledger", "failed")).isEqualTo(1);
    }

    @Test
    void worksWithoutAMeterRegistry() throws Throwable {
        FenceGuard guard = new FenceGuard(store);
        FencePoint point = new FencePoint("Repo.x()", "r", null, null, false, FencingMetrics.noop());
        assertThat(bound(new FencingToken("r", 1, "h"),
                () -> guard.invoke(point, new Object[0], () -> "ok"))).isEqualTo("ok");
    }

    @Test
    void issuerReturningATokenForAnotherResourceIsRefused() {
        TokenIssuer liar = new TokenIssuer() {
            @Override
            public Lease acquire(String resource, Duration timeout) {
                FencingToken wrong = new FencingToken("elsewhere", 1, "h");
                return new Lease() {
                    public FencingToken token() {
                        return wrong;
                    }

                    public boolean isLost() {
                        return false;
                    }

                    public boolean isReleased() {
                        return false;
                    }

                    public void close() {
                    }
                };
            }

        };
        FenceGuard guard = new FenceGuard(store, liar, Duration.ofSeconds(1));
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(service("r"), new Object[0], () -> ran.add("x")))
                .hasMessageContaining("elsewhere");
        assertThat(ran).isEmpty();
    }

    @Test
    void aStoreThatCannotDecideFailsClosedAndCountsAnError() {
        FenceGuard guard = new FenceGuard(new dev.fencing.store.FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, dev.fencing.store.FencedCall<T> write) {
                throw new dev.fencing.store.FenceStoreException(resource, token, "database unreachable", null);
            }
        });
        List<String> ran = new ArrayList<>();
        FencingContext.run(new FencingToken("r", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(repo("r"), new Object[0], () -> ran.add("x")))
                        .isInstanceOf(dev.fencing.store.FenceStoreException.class));
        assertThat(ran).isEmpty();
        assertThat(checks("r", "error")).isEqualTo(1);
        assertThat(checks("r", "accepted")).isZero();
    }

    @Test
    void aReleaseThatFailsAfterTheCallReturnedLeavesTheResultAndAfterAFailureIsSuppressed() throws Throwable {
        CountingIssuer issuer = new CountingIssuer();
        issuer.releaseFailure = new IllegalStateException("Could not release: etcd did not answer");
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(1));

        // the write is done: the caller gets its result, not an exception that says it failed
        assertThat(guard.invoke(service("r"), new Object[0], () -> "written")).isEqualTo("written");
        assertThat(issuer.released).isEqualTo(1);
        assertThat(FencingContext.current("r")).isNull();

        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> guard.invoke(service("r2"), new Object[0], () -> {
            throw boom;
        })).isSameAs(boom);
        assertThat(boom.getSuppressed()).containsExactly(issuer.releaseFailure);
    }

    /** Counts acquire and release calls around a real in-memory issuer. */
    static final class CountingIssuer implements TokenIssuer {
        final InMemoryTokenIssuer delegate = new InMemoryTokenIssuer();
        int acquired;
        int released;
        RuntimeException releaseFailure;

        @Override
        public Lease acquire(String resource, Duration timeout) {
            acquired++;
            Lease lease = delegate.acquire(resource, timeout);
            return new Lease() {
                @Override
                public FencingToken token() {
                    return lease.token();
                }

                @Override
                public boolean isLost() {
                    return lease.isLost();
                }

                @Override
                public boolean isReleased() {
                    return lease.isReleased();
                }

                @Override
                public void close() {
                    released++;
                    lease.close();
                    if (releaseFailure != null) {
                        throw releaseFailure;
                    }
                }
            };
        }
    }
}
