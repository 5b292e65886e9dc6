package dev.fencing.shedlock;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The decorator on its own: what is bound on the job's thread, when it is unbound, and how it fails closed. */
class FencingLockProviderTest {

    private final FakeLockProvider shedlock = new FakeLockProvider();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0);

    private static LockConfiguration config(String name) {
        return new LockConfiguration(Instant.now(), name, Duration.ofSeconds(10), Duration.ZERO);
    }

    @Test
    void aGrantedLockBindsATokenForTheLockNameUntilUnlock() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build();
        SimpleLock lock = provider.lock(config("nightly")).orElseThrow();
        FencingToken token = FencingContext.current("nightly");
        assertThat(token).isNotNull();
        assertThat(token.value()).isEqualTo(1);
        assertThat(issuer.isHeld("nightly")).isTrue();

        lock.unlock();
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(issuer.isHeld("nightly")).isFalse();
        assertThat(shedlock.events).containsExactly("locked nightly", "unlocked nightly");
    }

    @Test
    void aJobWhoseTokenNoCheckPresentedIsLoggedOncePerLockNameAndResource() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer)
                .resources("report-unchecked", "unchecked-ledger", "unchecked-accounts").build();
        List<LogRecord> records;
        try (LogRecords log = LogRecords.of(FencedLock.class)) {
            for (int run = 0; run < 2; run++) {
                SimpleLock lock = provider.lock(config("report-unchecked")).orElseThrow();
                FencingContext.present("unchecked-accounts"); // a check presents this one; the ledger's is not
                lock.unlock();
            }
            records = log.records();
        }
        assertThat(records).hasSize(1);
        assertThat(records.get(0).getLevel()).isEqualTo(Level.WARNING);
        assertThat(records.get(0).getMessage()).contains("'report-unchecked'", "'unchecked-ledger'",
                "@Fenced(resource = \"unchecked-ledger\")").doesNotContain("unchecked-accounts");
    }

    @Test
    void tokensGrowFromRunToRun() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build();
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            SimpleLock lock = provider.lock(config("nightly")).orElseThrow();
            tokens.add(FencingContext.current("nightly").value());
            lock.unlock();
        }
        assertThat(tokens).containsExactly(1L, 2L, 3L);
    }

    @Test
    void aMappedLockIsFencedForItsResourcesNotItsName() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer)
                .resources("nightly", "ledger", "accounts:42").build();
        SimpleLock lock = provider.lock(config("nightly")).orElseThrow();
        assertThat(FencingContext.current("ledger")).isNotNull();
        assertThat(FencingContext.current("accounts:42")).isNotNull();
        assertThat(FencingContext.current("nightly")).isNull();
        lock.unlock();
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(issuer.isHeld("ledger")).isFalse();
        assertThat(issuer.isHeld("accounts:42")).isFalse();
    }

    @Test
    void aLockRefusedByShedLockTakesNoToken() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build();
        shedlock.held.add("nightly");
        assertThat(provider.lock(config("nightly"))).isEmpty();
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(issuer.highestIssued("nightly")).isZero();
    }

    @Test
    void anIssuerThatCannotGrantUnlocksShedLockAgainAndTheJobDoesNotRun() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer)
                .resources("nightly", "a-ledger", "b-ledger").acquireTimeout(Duration.ofMillis(50)).build();
        try (Lease zombie = issuer.acquire("b-ledger", Duration.ZERO)) { // a zombie still holds one of the two
            DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
            List<String> ran = new ArrayList<>();
            assertThatThrownBy(() -> executor.executeWithLock((Runnable) () -> ran.add("job"), config("nightly")))
                    .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("b-ledger")
                    .hasMessageContaining("ShedLock granted lock 'nightly'")
                    .hasMessageContaining("another job mapped to the same resource")
                    .hasMessageContaining("lockAtMostFor");
            assertThat(ran).isEmpty();
            assertThat(zombie.isHeld()).isTrue();
        }
        assertThat(shedlock.held).isEmpty();
        assertThat(shedlock.events).containsExactly("locked nightly", "unlocked nightly");
        assertThat(issuer.isHeld("a-ledger")).as("the lease taken before the failure is given back").isFalse();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void aJobThatThrowsLeavesNothingBoundAndNothingHeld() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build();
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        AtomicReference<FencingToken> seen = new AtomicReference<>();
        assertThatThrownBy(() -> executor.executeWithLock((Runnable) () -> {
            seen.set(FencingContext.current("nightly"));
            throw new IllegalStateException("job failed");
        }, config("nightly"))).hasMessage("job failed");
        assertThat(seen.get()).isNotNull();
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(issuer.isHeld("nightly")).isFalse();
        assertThat(shedlock.held).isEmpty();
    }

    @Test
    void extendingKeepsTheTokenBoundAndTheExtendedLockUnbindsIt() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build();
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        List<Long> tokens = new ArrayList<>();
        executor.executeWithLock((Runnable) () -> {
            tokens.add(FencingContext.current("nightly").value());
            LockExtender.extendActiveLock(Duration.ofSeconds(20), Duration.ZERO);
            tokens.add(FencingContext.current("nightly").value());
        }, config("nightly"));
        assertThat(tokens).containsExactly(1L, 1L);
        assertThat(shedlock.events).containsExactly("locked nightly", "extended nightly", "unlocked nightly");
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(issuer.isHeld("nightly")).isFalse();
    }

    @Test
    void aLockThatWasExtendedCannotBeUnlockedAgainButAFailedExtensionLeavesItUsable() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build();
        SimpleLock first = provider.lock(config("nightly")).orElseThrow();
        shedlock.extendable = false;
        assertThat(first.extend(Duration.ofSeconds(20), Duration.ZERO)).isEmpty();
        shedlock.extendable = true;
        SimpleLock second = first.extend(Duration.ofSeconds(20), Duration.ZERO).orElseThrow();
        assertThatThrownBy(first::unlock).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'nightly'").hasMessageContaining("extended already");
        assertThat(FencingContext.current("nightly")).isNotNull();
        second.unlock();
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThatThrownBy(second::unlock).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aLockGrantedWhileItsResourceIsBoundLocallyReusesThatToken() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer)
                .resources("inner", "ledger").build();
        FencingToken outer = new FencingToken("ledger", 7, "outer");
        try (FencingScope ignored = FencingContext.bind(outer)) {
            SimpleLock lock = provider.lock(config("inner")).orElseThrow();
            assertThat(FencingContext.current("ledger")).isSameAs(outer);
            assertThat(issuer.highestIssued("ledger")).isZero();
            lock.unlock();
            assertThat(FencingContext.current("ledger")).isSameAs(outer);
        }
    }

    /**
     * A job locked on a thread where a caller's token for its resource is bound (a listener or request handler that
     * runs it through ShedLock's {@code LockingTaskExecutor}, the message a zombie's, consumed late) used to take a
     * lease of its own and write under it, setting the caller's stale token aside: refused instead, before ShedLock
     * locks anything, as {@code @Fenced(acquire = true)} and {@code FencedLockRegistry} refuse it.
     */
    @Test
    void aCallersTokenForTheJobsResourceIsRefusedBeforeAnythingIsLocked() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).resources("job", "ledger").build();
        FencingToken remote = new FencingToken("ledger", 70, "from-a-header");
        try (FencingScope ignored = FencingContext.bindRemote(List.of(remote))) {
            assertThatThrownBy(() -> provider.lock(config("job")))
                    .isInstanceOfSatisfying(RemoteTokenSetAsideException.class, e -> {
                        assertThat(e.resource()).isEqualTo("ledger");
                        assertThat(e.presentedValue()).isEqualTo(70);
                    })
                    .hasMessageContaining("ShedLock lock 'job'").hasMessageContaining("'ledger'");
            assertThat(shedlock.events).as("ShedLock locked nothing").isEmpty();
            assertThat(issuer.isHeld("ledger")).isFalse();
            assertThat(FencingContext.current("ledger")).isSameAs(remote);
        }
        FencingToken other = new FencingToken("accounts", 70, "from-a-header");
        try (FencingScope ignored = FencingContext.bindRemote(List.of(other))) {
            SimpleLock lock = provider.lock(config("job")).orElseThrow();
            assertThat(FencingContext.currentLocal("ledger").value()).as("a token of another resource: no reason")
                    .isEqualTo(1);
            lock.unlock();
        }
    }

    @Test
    void unlockOnAnotherThreadReleasesEverythingAndSaysWhereTheTokensStayBound() throws Exception {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build();
        AtomicReference<SimpleLock> locked = new AtomicReference<>();
        Thread job = new Thread(() -> locked.set(provider.lock(config("nightly")).orElseThrow()), "job-thread");
        job.start();
        job.join(10_000); // the thread that holds the binding ends, and its thread-local with it
        assertThatThrownBy(() -> locked.get().unlock()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'nightly'").hasMessageContaining("job-thread")
                .hasMessageContaining("lock and unlock on one thread");
        assertThat(issuer.isHeld("nightly")).isFalse();
        assertThat(shedlock.held).isEmpty();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void mappedOnlyRefusesAnUnmappedNameBeforeLockingAnything() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer)
                .resources("nightly", "ledger").mappedOnly(true).build();
        assertThatThrownBy(() -> provider.lock(config("hourly")))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("'hourly'").hasMessageContaining("[nightly]");
        assertThat(shedlock.events).isEmpty();
    }

    @Test
    void theBuilderRefusesWhatCannotWork() {
        assertThatThrownBy(() -> FencingLockProvider.builder(shedlock, null))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("needs a TokenIssuer");
        FencingLockProvider fenced = FencingLockProvider.builder(shedlock, issuer).build();
        assertThatThrownBy(() -> FencingLockProvider.builder(fenced, issuer))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("fenced already");
        FencingLockProvider.Builder builder = FencingLockProvider.builder(shedlock, issuer).resources("a", "x");
        assertThatThrownBy(() -> builder.resources("a", "y")).hasMessageContaining("mapped twice");
        assertThatThrownBy(() -> builder.resources("b")).hasMessageContaining("mapped to no resource");
        assertThatThrownBy(() -> builder.resources("c", "x".repeat(300)))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("'c'");
        assertThatThrownBy(() -> builder.acquireTimeout(Duration.ofSeconds(-1))).hasMessageContaining("negative");
    }

    @Test
    void aLockNameNoTokenCanCarryIsRefusedBeforeLocking() {
        TokenIssuer failing = new InMemoryTokenIssuer();
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, failing).build();
        assertThatThrownBy(() -> provider.lock(config("n".repeat(300)))).isInstanceOf(IllegalArgumentException.class);
        assertThat(shedlock.events).isEmpty();
    }
}
