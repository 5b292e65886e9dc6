package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The bracket form of the guard ({@link FenceBracket}, the woven aspect's path) against its callback form
 * ({@link FenceGuard#invoke}): every outcome must be thrown, counted, reported and stored alike, and the resource
 * released on every exit.
 */
class FenceBracketTest {

    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes();

    @AfterEach
    void nothingStaysBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /** The body of a fenced method in one scenario. */
    interface Body {
        Object run(Fixture fixture) throws Throwable;
    }

    /** How the fence is run: the two paths under comparison. */
    enum Path {
        CALLBACK {
            @Override
            Object run(Fixture f, FencePoint point, Object[] args, FencedCall<Object> body) throws Throwable {
                return f.guard.invoke(point, args, body);
            }
        },
        BRACKET {
            @Override
            Object run(Fixture f, FencePoint point, Object[] args, FencedCall<Object> body) throws Throwable {
                FenceBracket bracket = f.guard.bracket(point);
                assertThat(bracket).as("bracket of " + point).isNotNull();
                return around(bracket, bracket.token(args), body);
            }
        },
        /** The bracket given the arguments one by one, as the woven aspect's advices for one to three parameters. */
        BRACKET_BY_ARGUMENT {
            @Override
            Object run(Fixture f, FencePoint point, Object[] args, FencedCall<Object> body) throws Throwable {
                FenceBracket bracket = f.guard.bracket(point);
                Object[] three = Arrays.copyOf(args, 3);
                return around(bracket, bracket.token(args.length, three[0], three[1], three[2]), body);
            }
        },
        /** The same, through the form for up to six, as the woven aspect's advices for four to six parameters. */
        BRACKET_BY_SIX_ARGUMENTS {
            @Override
            Object run(Fixture f, FencePoint point, Object[] args, FencedCall<Object> body) throws Throwable {
                FenceBracket bracket = f.guard.bracket(point);
                Object[] six = Arrays.copyOf(args, 6);
                return around(bracket, bracket.token(args.length, six[0], six[1], six[2], six[3], six[4], six[5]),
                        body);
            }
        };

        abstract Object run(Fixture f, FencePoint point, Object[] args, FencedCall<Object> body) throws Throwable;

        /** The bracket's protocol around {@code body}, once the token is found. */
        static Object around(FenceBracket bracket, FencingToken token, FencedCall<Object> body) throws Throwable {
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = body.proceed();
            } catch (Throwable t) {
                throw bracket.failed(entry, token, t);
            }
            bracket.exit(entry);
            return result;
        }

        Object run(Fixture f, FencePoint point, FencedCall<Object> body) throws Throwable {
            return run(f, point, new Object[0], body);
        }
    }

    /** One guard, store, registry and listener; fresh per scenario and path. */
    static final class Fixture {
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        final FencingMetrics metrics = new FencingMetrics(registry);
        final InMemoryFenceStore store;
        final List<TokenRejectedException> heard = new ArrayList<>();
        final FenceGuard guard;
        final FencePoint point;
        final FencePoint nested;
        final Path path;
        int writes;

        Fixture(Path path, InMemoryFenceStore store, TokenVerifier verifier) {
            this.path = path;
            this.store = store;
            this.guard = FenceGuard.builder(store).verifier(verifier).rejectionListener(heard::add).build();
            this.point = new FencePoint("Repo.write(String)", "docs", null, null, false, metrics);
            this.nested = new FencePoint("Audit.log(String)", "audit", null, null, false, metrics);
        }

        Object fenced(Body body) throws Throwable {
            return path.run(this, point, () -> body.run(this));
        }

        /** Counters, listener, store and writes after the scenario, for comparison. */
        String state() {
            Map<String, Double> counts = new TreeMap<>();
            registry.getMeters().stream().filter(m -> m.getId().getName().equals(FencingMetrics.CHECKS))
                    .forEach(m -> counts.put(m.getId().getTag("resource") + "/" + m.getId().getTag("outcome"),
                            ((Counter) m).count()));
            counts.values().removeIf(v -> v == 0);
            List<String> told = heard.stream().map(e -> e.getClass().getSimpleName() + " " + e.verdict() + " "
                    + e.operation() + " " + e.presented()).toList();
            return "checks=" + counts + " heard=" + told + " maxSeen=" + store.maxSeen("docs") + "/"
                    + store.maxSeen("audit") + " writes=" + writes;
        }
    }

    /** The scenarios: how the store and verifier are prepared, what is bound, what the body does. */
    enum Scenario {
        ACCEPTED(token(5), f -> ++f.writes),
        STALE(token(5), f -> ++f.writes) {
            @Override
            void prepare(InMemoryFenceStore store) {
                store.raiseFloor("docs", 10);
            }
        },
        DUPLICATE(token(7), f -> ++f.writes) {
            @Override
            void prepare(InMemoryFenceStore store) throws Throwable {
                FencingToken other = new FencingToken("docs", 7, "another-holder");
                store.fence("docs", other, () -> null);
            }
        },
        OUT_OF_RANGE(token(1_000), f -> ++f.writes) {
            @Override
            InMemoryFenceStore store() {
                InMemoryFenceStore bounded = new InMemoryFenceStore(10);
                bounded.raiseFloor("docs", 1);
                return bounded;
            }
        },
        MISSING(null, f -> ++f.writes),
        FORGED(token(5), f -> ++f.writes) {
            @Override
            TokenVerifier verifier() {
                return new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
            }
        },
        SIGNED(TokenSigner.hmac("k1", SECRET).sign(token(5)), f -> ++f.writes) {
            @Override
            TokenVerifier verifier() {
                return new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
            }
        },
        BODY_THROWS_UNCHECKED(token(5), f -> {
            f.writes++;
            throw new IllegalStateException("the write failed");
        }),
        BODY_THROWS_CHECKED(token(5), f -> {
            f.writes++;
            throw new IOException("disk full");
        }),
        BODY_THROWS_ERROR(token(5), f -> {
            f.writes++;
            throw new StackOverflowError("deep");
        }),
        NESTED_CALL_REJECTED(token(5), f -> {
            f.writes++;
            // a nested fenced call on another resource, refused there: counted there, this check accepted
            try (FencingScope ignored = FencingContext.bind(new FencingToken("audit", 1, "client"))) {
                return f.path.run(f, f.nested, () -> ++f.writes);
            }
        }) {
            @Override
            void prepare(InMemoryFenceStore store) {
                store.raiseFloor("audit", 3);
            }
        },
        NESTED_CALL_SAME_RESOURCE(token(5), f -> {
            f.writes++;
            FencePoint again = new FencePoint("Repo.append(String)", "docs", null, null, false, f.metrics);
            return f.path.run(f, again, () -> ++f.writes);
        });

        final FencingToken bound;
        final Body body;

        Scenario(FencingToken bound, Body body) {
            this.bound = bound;
            this.body = body;
        }

        void prepare(InMemoryFenceStore store) throws Throwable {
        }

        InMemoryFenceStore store() {
            return new InMemoryFenceStore();
        }

        TokenVerifier verifier() {
            return null;
        }

        /** Runs the scenario on {@code path}: what it returned or threw, then the state it left. */
        String outcome(Path path) throws Throwable {
            InMemoryFenceStore store = store();
            prepare(store);
            Fixture fixture = new Fixture(path, store, verifier());
            String result;
            try (FencingScope ignored = bound == null ? FencingContext.bind(List.of()) : FencingContext.bind(bound)) {
                result = "returned " + fixture.fenced(body);
            } catch (Throwable t) {
                result = "threw " + t.getClass().getName() + ": " + t.getMessage();
            }
            assertThat(released(store, "docs")).as("docs released").isTrue();
            return result + " | " + fixture.state();
        }
    }

    private static FencingToken token(long value) {
        return new FencingToken("docs", value, "client");
    }

    /** Scenarios of a point with a key ({@code docs:<first argument>}), the proxy interceptor's keyed bracket. */
    enum KeyedScenario {
        ACCEPTED(new FencingToken("docs:7", 5, "client"), "7", null),
        STALE(new FencingToken("docs:7", 5, "client"), "7", null) {
            @Override
            void prepare(InMemoryFenceStore store) {
                store.raiseFloor("docs:7", 10);
            }
        },
        ANOTHER_KEYS_TOKEN(new FencingToken("docs:8", 5, "client"), "7", null),
        NO_KEY(new FencingToken("docs:7", 5, "client"), null, null),
        BLANK_KEY(new FencingToken("docs:7", 5, "client"), " ", null),
        CONTROL_CHARACTER_KEY(new FencingToken("docs:7", 5, "client"), "7\n", null),
        INVISIBLE_KEY(new FencingToken("docs:7", 5, "client"), "7\u200B", null),
        BODY_THROWS(new FencingToken("docs:7", 5, "client"), "7", new IOException("disk full"));

        final FencingToken bound;
        final Object key;
        final Throwable thrown;

        KeyedScenario(FencingToken bound, Object key, Throwable thrown) {
            this.bound = bound;
            this.key = key;
            this.thrown = thrown;
        }

        void prepare(InMemoryFenceStore store) {
        }

        String outcome(Path path) throws Throwable {
            InMemoryFenceStore store = new InMemoryFenceStore();
            prepare(store);
            Fixture f = new Fixture(path, store, null);
            FencePoint keyed = new FencePoint("Repo.write(String)", "docs", new ArgumentKey(0), "#p0",
                    false, f.metrics);
            String result;
            try (FencingScope ignored = FencingContext.bind(bound)) {
                result = "returned " + path.run(f, keyed, new Object[] {key}, () -> {
                    f.writes++;
                    if (thrown != null) {
                        throw thrown;
                    }
                    return f.writes;
                });
            } catch (Throwable t) {
                result = "threw " + t.getClass().getName() + ": " + t.getMessage();
            }
            assertThat(released(store, "docs:7")).as("docs:7 released").isTrue();
            return result + " | " + f.state() + " docs:7=" + store.maxSeen("docs:7");
        }
    }

    @ParameterizedTest
    @EnumSource(KeyedScenario.class)
    void aKeyedBracketThrowsCountsReportsAndStoresExactlyAsTheCallback(KeyedScenario scenario) throws Throwable {
        String callback = scenario.outcome(Path.CALLBACK);
        assertThat(scenario.outcome(Path.BRACKET)).isEqualTo(callback);
        assertThat(scenario.outcome(Path.BRACKET_BY_ARGUMENT)).isEqualTo(callback);
        assertThat(scenario.outcome(Path.BRACKET_BY_SIX_ARGUMENTS)).isEqualTo(callback);
    }

    /** A key that is one argument and says which, as a SpEL key such as {@code #id} does. */
    record ArgumentKey(int argument) implements KeyFunction {
        @Override
        public Object keyOf(Object[] args) {
            return args[argument];
        }

        @Override
        public Object keyOfArgument(Object value) {
            return value;
        }
    }

    @Test
    void argumentsGivenOneByOneAreKeyedByTheArgumentTheKeyNamesAndOtherwiseAsAnArray() {
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).build();
        FenceBracket third = guard.bracket(new FencePoint("Repo.write(String, String, long)", "docs",
                new ArgumentKey(2), "#id", false, FencingMetrics.noop()));
        FenceBracket fifth = guard.bracket(new FencePoint("Repo.write(int, int, int, int, long)", "docs",
                new ArgumentKey(4), "#id", false, FencingMetrics.noop()));
        FenceBracket sixth = guard.bracket(new FencePoint("Repo.write(int, int, int, int, int, long)", "docs",
                new ArgumentKey(5), "#id", false, FencingMetrics.noop()));
        List<Object[]> seen = new ArrayList<>();
        FenceBracket joined = guard.bracket(new FencePoint("Repo.write(String, String)", "docs", args -> {
            seen.add(args);
            return args[0] + "-" + args[1];
        }, "#a + '-' + #b", false, FencingMetrics.noop()));
        try (FencingScope ignored = FencingContext.bind(new FencingToken("docs:7", 1, "h"),
                new FencingToken("docs:a-b", 1, "h"))) {
            assertThat(third.token(3, "8", "9", 7L).resource()).isEqualTo("docs:7");
            assertThatThrownBy(() -> third.token(3, 7L, 7L, 8L)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("docs:8");
            assertThat(joined.token(2, "a", "b", null).resource()).isEqualTo("docs:a-b");
            assertThat(seen).hasSize(1);
            assertThat(seen.get(0)).containsExactly("a", "b"); // the call's own count, not three
            assertThatThrownBy(() -> third.token(4, 1, 2, 3)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not 4");
            assertThatThrownBy(() -> third.token(2, "8", "9", 7L)).as("the key's argument is past the count")
                    .isInstanceOf(InvalidKeyException.class);
            assertThat(sixth.token(6, 1, 2, 3, 4, 5, 7L).resource()).isEqualTo("docs:7");
            assertThatThrownBy(() -> sixth.token(6, 7L, 7L, 7L, 7L, 7L, 8L)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("docs:8");
            assertThat(fifth.token(5, 0, 0, 0, 0, 7L, null).resource()).isEqualTo("docs:7");
            assertThat(joined.token(2, "a", "b", null, null, null, null).resource()).isEqualTo("docs:a-b");
            assertThat(seen.get(1)).containsExactly("a", "b");
            assertThatThrownBy(() -> sixth.token(7, 1, 2, 3, 4, 5, 6)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not 7");
            assertThatThrownBy(() -> sixth.token(5, 1, 2, 3, 4, 5, 7L)).as("the key's argument is past the count")
                    .isInstanceOf(InvalidKeyException.class);
        }
        FencePoint several = new FencePoint("Repo.write(String, String)", "docs", args -> args[0], "#p0", false,
                FencingMetrics.noop());
        assertThat(several.keyArgument()).isEqualTo(-1);
        assertThatThrownBy(() -> several.keyOfArgument("7")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("does not read one argument alone").hasMessageContaining("Repo.write");
    }

    @Test
    void theKeyedScenariosReallyDiffer() throws Throwable {
        assertThat(KeyedScenario.ACCEPTED.outcome(Path.BRACKET)).contains("returned 1").contains("docs/accepted=1.0")
                .contains("docs:7=OptionalLong[5]");
        assertThat(KeyedScenario.STALE.outcome(Path.BRACKET)).contains("StaleTokenException")
                .contains("docs/stale=1.0").contains("writes=0");
        assertThat(KeyedScenario.ANOTHER_KEYS_TOKEN.outcome(Path.BRACKET)).contains("MissingTokenException")
                .contains("docs:7").contains("docs/missing=1.0");
        assertThat(KeyedScenario.NO_KEY.outcome(Path.BRACKET)).contains("InvalidKeyException")
                .contains("docs/invalid=1.0").contains("writes=0");
        assertThat(KeyedScenario.CONTROL_CHARACTER_KEY.outcome(Path.BRACKET)).contains("InvalidKeyException")
                .contains("'7\\u000A'").contains("docs/invalid=1.0").contains("writes=0");
        assertThat(KeyedScenario.INVISIBLE_KEY.outcome(Path.BRACKET)).contains("MissingTokenException")
                .contains("'docs:7\\u200B'").contains("docs/missing=1.0").contains("writes=0");
        assertThat(KeyedScenario.BODY_THROWS.outcome(Path.BRACKET)).contains("threw java.io.IOException: disk full")
                .contains("docs/accepted=1.0").contains("writes=1");
        FenceBracket bracket = FenceGuard.builder(new InMemoryFenceStore()).build().bracket(new FencePoint(
                "Repo.write(String)", "docs", args -> args[0], "#p0", false, FencingMetrics.noop()));
        assertThatThrownBy(bracket::token).isInstanceOf(IllegalStateException.class).hasMessageContaining("has a key");
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void theBracketThrowsCountsReportsAndStoresExactlyAsTheCallback(Scenario scenario) throws Throwable {
        String callback = scenario.outcome(Path.CALLBACK);
        String bracket = scenario.outcome(Path.BRACKET);
        assertThat(bracket).isEqualTo(callback);
    }

    @Test
    void theScenariosReallyDiffer() throws Throwable {
        // guards the comparison above against a state() that sees nothing
        assertThat(Scenario.ACCEPTED.outcome(Path.BRACKET))
                .contains("returned 1").contains("docs/accepted=1.0").contains("maxSeen=OptionalLong[5]");
        assertThat(Scenario.STALE.outcome(Path.BRACKET)).contains("StaleTokenException").contains("docs/stale=1.0")
                .contains("heard=[StaleTokenException REJECT_STALE Repo.write(String)").contains("writes=0");
        assertThat(Scenario.MISSING.outcome(Path.BRACKET)).contains("MissingTokenException")
                .contains("docs/missing=1.0");
        assertThat(Scenario.FORGED.outcome(Path.BRACKET)).contains("ForgedTokenException")
                .contains("docs/forged=1.0");
        assertThat(Scenario.BODY_THROWS_CHECKED.outcome(Path.BRACKET)).contains("threw java.io.IOException: disk full")
                .contains("docs/accepted=1.0").contains("writes=1");
        assertThat(Scenario.NESTED_CALL_REJECTED.outcome(Path.BRACKET)).contains("audit/stale=1.0")
                .contains("docs/accepted=1.0");
        assertThat(Scenario.NESTED_CALL_SAME_RESOURCE.outcome(Path.BRACKET)).contains("returned 2")
                .contains("docs/accepted=2.0");
    }

    @Test
    @Timeout(30)
    void theResourceIsHeldUntilExitAndReleasedAfterTheBodyThrew() throws Throwable {
        Fixture fixture = new Fixture(Path.BRACKET, new InMemoryFenceStore(), null);
        FenceBracket bracket = fixture.guard.bracket(fixture.point);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Throwable> first = CompletableFuture.supplyAsync(() -> {
            try (FencingScope ignored = FencingContext.bind(token(5))) {
                FencingToken token = bracket.token();
                BracketFenceStore.Entry entry = bracket.enter(token);
                try {
                    entered.countDown();
                    finish.await();
                    throw new IllegalStateException("body failed");
                } catch (Throwable t) {
                    return bracket.failed(entry, token, t);
                }
            }
        });
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Object> second = CompletableFuture.supplyAsync(() -> {
            try (FencingScope ignored = FencingContext.bind(token(6))) {
                return Path.BRACKET.run(fixture, fixture.point, () -> "second");
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        });
        // held by the first caller: the second waits
        assertThatThrownBy(() -> second.get(300, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        finish.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).hasMessage("body failed");
        assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(fixture.store.maxSeen("docs")).hasValue(6);
        assertThat(released(fixture.store, "docs")).isTrue();
        assertThat(fixture.registry.get(FencingMetrics.CHECKS).tag("resource", "docs").tag("outcome", "accepted")
                .counter().count())
                .isEqualTo(2);
    }

    @Test
    void aRejectedEnterHoldsNothing() {
        Fixture fixture = new Fixture(Path.BRACKET, new InMemoryFenceStore(), null);
        fixture.store.raiseFloor("docs", 9);
        FenceBracket bracket = fixture.guard.bracket(fixture.point);
        assertThatThrownBy(() -> bracket.enter(token(3))).isInstanceOf(TokenRejectedException.class)
                .hasMessageContaining("Repo.write(String)");
        assertThat(released(fixture.store, "docs")).isTrue();
    }

    @Test
    void theStoreRefusesATokenOfAnotherResourceAndHoldsNothing() {
        InMemoryFenceStore store = new InMemoryFenceStore();
        assertThatThrownBy(() -> store.enter("docs", new FencingToken("other", 1, "h")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'other'")
                .hasMessageContaining("'docs'");
        assertThat(store.size()).isZero();
    }

    @Test
    void onlyACheckingPointOnABracketStoreWithoutObservationsGetsABracket() {
        FencingMetrics metrics = new FencingMetrics(new SimpleMeterRegistry());
        FencePoint plain = new FencePoint("Repo.write(String)", "docs", null, null, false, metrics);
        FencePoint keyed = new FencePoint("Repo.write(String)", "docs", args -> args[0], "#p0", false, metrics);
        FencePoint acquiring = new FencePoint("Repo.write(String)", "docs", null, null, true, metrics);
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).issuer(new InMemoryTokenIssuer()).build();
        assertThat(guard.bracket(plain)).isNotNull().extracting(FenceBracket::point).isSameAs(plain);
        assertThat(guard.bracket(keyed)).isNotNull().extracting(FenceBracket::point).isSameAs(keyed);
        assertThat(guard.bracket(acquiring)).isNull();

        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(context -> true);
        assertThat(FenceGuard.builder(new InMemoryFenceStore()).observations(observations).build().bracket(plain))
                .isNull();
        FenceStore callbackOnly = new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                return write.proceed();
            }
        };
        assertThat(new FenceGuard(callbackOnly, null, Duration.ofSeconds(1)).bracket(plain)).isNull();
        assertThatThrownBy(() -> FenceBracket.of(acquiring, new InMemoryFenceStore(), RejectionListener.NONE, null,
                dev.fencing.mode.FenceModes.enforcing()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("checking point only");
    }

    /** Whether another thread can take {@code resource} now (nobody holds it): reading max_seen takes its lock. */
    private static boolean released(InMemoryFenceStore store, String resource) {
        try {
            CompletableFuture.supplyAsync(() -> store.maxSeen(resource)).get(5, TimeUnit.SECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
