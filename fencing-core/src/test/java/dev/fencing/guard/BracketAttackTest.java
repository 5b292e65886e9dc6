package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Attacks on the bracket (the proxy's and the woven aspect's hot path) that {@link FenceBracketTest}'s scenarios do
 * not make: a lock known lost on each kind of bracket, two holders of one token value racing, and a keyed scope of
 * many entities whose keys come as every number type and text.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BracketAttackTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final List<TokenRejectedException> heard = new ArrayList<>();
    private final FenceGuard guard = FenceGuard.builder(store).rejectionListener(heard::add).build();
    private final FencePoint unkeyed = new FencePoint("Repo.append()", "ledger", null, null, false, metrics);
    private final FencePoint keyed = new FencePoint("Repo.credit(Object)", "accounts", new KeyFunction() {
        @Override
        public Object keyOf(Object[] args) {
            return args[0];
        }

        @Override
        public int argument() {
            return 0;
        }

        @Override
        public Object keyOfArgument(Object argument) {
            return argument;
        }
    }, "#p0", false, metrics);

    @AfterEach
    void nothingStaysBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private Map<String, Double> checks() {
        Map<String, Double> counts = new TreeMap<>();
        registry.getMeters().stream().filter(m -> m.getId().getName().equals(FencingMetrics.CHECKS))
                .forEach(m -> counts.merge(m.getId().getTag("resource") + "/" + m.getId().getTag("outcome"),
                        ((Counter) m).count(), Double::sum));
        counts.values().removeIf(v -> v == 0);
        return counts;
    }

    private static Object around(FenceBracket bracket, FencingToken token, Runnable body) {
        BracketFenceStore.Entry entry = bracket.enter(token);
        try {
            body.run();
        } catch (Throwable t) {
            throw new IllegalStateException(bracket.failed(entry, token, t));
        }
        bracket.exit(entry);
        return null;
    }

    /** A lost lock on both kinds of bracket: refused before the store, stale once, reported, nothing held. */
    @Test
    void aLockKnownLostIsRefusedByEachKindOfBracketBeforeTheStore() throws Exception {
        boolean[] lost = {false};
        FencingToken ledger = new FencingToken("ledger", 7, "zombie");
        FencingToken account = new FencingToken("accounts:42", 8, "zombie");
        TokenUse ledgerUse = TokenUse.open(ledger, () -> lost[0]);
        TokenUse accountUse = TokenUse.open(account, () -> lost[0]);
        FenceBracket plain = guard.bracket(unkeyed);
        FenceBracket byKey = guard.bracket(keyed);
        try (FencingScope ignored = FencingContext.bindAcquired(List.of(ledger, account),
                List.of(ledgerUse, accountUse))) {
            around(plain, plain.token(new Object[0]), () -> { });
            around(byKey, byKey.token(new Object[] {42L}), () -> { });
            lost[0] = true;
            assertThatThrownBy(() -> plain.token(new Object[0])).isInstanceOfSatisfying(StaleTokenException.class,
                    e -> assertThat(e.lockLost()).isTrue());
            assertThatThrownBy(() -> byKey.token(1, 42, null, null)).isInstanceOfSatisfying(
                    StaleTokenException.class, e -> assertThat(e.lockLost()).isTrue());
            assertThatThrownBy(() -> byKey.token(new Object[] {"42"})).isInstanceOf(StaleTokenException.class);
        } finally {
            ledgerUse.close();
            accountUse.close();
        }
        assertThat(checks()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "ledger/accepted", 1.0, "ledger/stale", 1.0, "accounts/accepted", 1.0, "accounts/stale", 2.0));
        assertThat(heard).hasSize(3).allSatisfy(e -> assertThat(e).isInstanceOf(StaleTokenException.class));
        assertThat(heard).extracting(TokenRejectedException::operation)
                .containsExactly("Repo.append()", "Repo.credit(Object)", "Repo.credit(Object)");
        // nothing held: another thread enters both at once
        assertThat(Executors.newSingleThreadExecutor().submit(() -> {
            store.enter("ledger", new FencingToken("ledger", 9, "next")).exit();
            store.enter("accounts:42", new FencingToken("accounts:42", 9, "next")).exit();
            return true;
        }).get(5, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * Two holders presenting one token value at once, through the unkeyed lane and the keyed store path: exactly one
     * writes per round, the other is refused as a duplicate, and the counters add up.
     */
    @Test
    void twoHoldersOfOneValueNeverBothWrite() throws Exception {
        int rounds = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        AtomicInteger writes = new AtomicInteger();
        AtomicInteger duplicates = new AtomicInteger();
        FenceBracket plain = guard.bracket(unkeyed);
        FenceBracket byKey = guard.bracket(keyed);
        try {
            for (int round = 1; round <= rounds; round++) {
                CyclicBarrier start = new CyclicBarrier(2);
                List<Future<?>> both = new ArrayList<>();
                for (String holder : new String[] {"a", "b"}) {
                    long value = round;
                    both.add(pool.submit(() -> {
                        FencingToken ledger = new FencingToken("ledger", value, holder);
                        FencingToken account = new FencingToken("accounts:" + (value % 3), value, holder);
                        try (FencingScope ignored = FencingContext.bind(ledger, account)) {
                            start.await(5, TimeUnit.SECONDS);
                            for (FenceBracket bracket : new FenceBracket[] {plain, byKey}) {
                                try {
                                    around(bracket, bracket.token(1, value % 3, null, null),
                                            writes::incrementAndGet);
                                } catch (DuplicateTokenException e) {
                                    duplicates.incrementAndGet();
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : both) {
                    f.get(10, TimeUnit.SECONDS);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(writes.get()).as("one writer per value and resource").isEqualTo(2 * rounds);
        assertThat(duplicates.get()).isEqualTo(2 * rounds);
        assertThat(checks()).containsExactlyInAnyOrderEntriesOf(Map.of("ledger/accepted", (double) rounds,
                "ledger/duplicate", (double) rounds, "accounts/accepted", (double) rounds,
                "accounts/duplicate", (double) rounds));
    }

    /**
     * A keyed scope of many entities (more than any shared small array), keys given as Integer, Long, text, a
     * BigDecimal with trailing zeros, negative and extreme numbers: each call enters its own entity's slot with its
     * own token, an entity not bound is missing, and nothing of one entity's token reaches another's max_seen.
     */
    @Test
    void aKeyedScopeOfManyEntitiesEntersEachWithItsOwnToken() {
        long[] ids = {0, 1, 2, 9, 10, 11, 12, 19, 21, 112, 121, 211, -1, -12, Integer.MAX_VALUE,
            Integer.MAX_VALUE + 1L, Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1};
        List<FencingToken> tokens = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            tokens.add(new FencingToken("accounts:" + ids[i], 100 + i, "h"));
        }
        FenceBracket byKey = guard.bracket(keyed);
        try (FencingScope ignored = FencingContext.bind(tokens)) {
            for (int pass = 0; pass < 3; pass++) {
                for (int i = ids.length - 1; i >= 0; i--) {
                    long id = ids[i];
                    Object key = switch ((i + pass) % 4) {
                        case 0 -> id;
                        case 1 -> (id >= Integer.MIN_VALUE && id <= Integer.MAX_VALUE) ? (Object) (int) id : id;
                        case 2 -> Long.toString(id);
                        default -> KeyValues.textOf(new BigDecimal(id).setScale(2));
                    };
                    FencingToken found = byKey.token(new Object[] {key});
                    assertThat(found).as("key %s (%s)", key, key.getClass().getSimpleName())
                            .isSameAs(tokens.get(i));
                    around(byKey, found, () -> { });
                }
            }
            for (Object absent : new Object[] {3L, 3, "3", "012", "+12", "-0", 120L, 1211L}) {
                assertThatThrownBy(() -> byKey.token(new Object[] {absent})).as("%s", absent)
                        .isInstanceOf(dev.fencing.context.MissingTokenException.class);
            }
        }
        for (int i = 0; i < ids.length; i++) {
            assertThat(store.maxSeen("accounts:" + ids[i])).as("%d", ids[i]).hasValue(100 + i);
        }
        assertThat(store.size()).isEqualTo(ids.length);
        assertThat(checks()).containsEntry("accounts/accepted", 3.0 * ids.length)
                .containsEntry("accounts/missing", 8.0);
    }
}
