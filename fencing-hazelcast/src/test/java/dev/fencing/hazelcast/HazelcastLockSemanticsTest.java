package dev.fencing.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What {@code FencedLock} adds to the contract: no reentrancy per thread (each acquisition locks as an id of its
 * own), leases closed on another thread, lock names that cannot select a CP group, and
 * the startup checks.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class HazelcastLockSemanticsTest {

    private CpGroup group;
    private HazelcastTokenIssuer issuer;
    private HazelcastTokenIssuer otherIssuer;
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<Lease> toClose = new ArrayList<>();

    @BeforeAll
    void start() {
        group = CpGroup.shared();
        issuer = new HazelcastTokenIssuer(group.members.get(0), "semantics/", Duration.ofMillis(200), null);
        otherIssuer = new HazelcastTokenIssuer(group.members.get(1), "semantics/", Duration.ofMillis(200), null);
    }

    @AfterAll
    void stop() {
        toClose.forEach(Lease::close);
        pool.shutdownNow();
        issuer.close();
        otherIssuer.close();
    }

    private static String fresh() {
        return "semantics-" + UUID.randomUUID();
    }

    /**
     * A lease outlives its acquiring thread's task (an async or reactive method: the acquire runs on a pooled thread
     * that goes on to other work), so a later acquire on that thread must not re-enter it. A trial with reactive
     * {@code @Fenced(acquire = true)} methods saw six subscriptions hold one lock at once with one token, all six
     * writes accepted, five updates lost: {@code FencedLock} is reentrant per thread, and the acquires ran on the
     * same elastic threads.
     */
    @Test
    void twoAcquisitionsOnOneThreadNeverReEnterEachOther() throws Throwable {
        String r = fresh();
        InMemoryFenceStore store = new InMemoryFenceStore();
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            Lease first = one.submit(() -> issuer.acquire(r, Duration.ofSeconds(10))).get(20, TimeUnit.SECONDS);
            store.fence(r, first.token(), () -> null);
            assertThatThrownBy(() -> one.submit(() -> issuer.acquire(r, Duration.ofMillis(500)))
                    .get(20, TimeUnit.SECONDS)).as("the acquiring thread, at its next task")
                    .hasCauseInstanceOf(LockAcquisitionException.class);
            assertThatThrownBy(() -> issuer.acquire(r, Duration.ofMillis(300))).as("this thread")
                    .isInstanceOf(LockAcquisitionException.class);
            try (HazelcastTokenIssuer sameInstance = new HazelcastTokenIssuer(group.members.get(0), "semantics/",
                    Duration.ofSeconds(1), null)) {
                assertThatThrownBy(() -> one.submit(() -> sameInstance.acquire(r, Duration.ofMillis(300)))
                        .get(20, TimeUnit.SECONDS)).as("another issuer on the same instance")
                        .hasCauseInstanceOf(LockAcquisitionException.class);
            }
            first.close(); // on this thread, not the acquiring one
            Lease second = one.submit(() -> issuer.acquire(r, Duration.ofSeconds(10))).get(20, TimeUnit.SECONDS);
            try {
                assertThat(second.token().value()).isGreaterThan(first.token().value());
                assertThat(second.token().holder()).isNotEqualTo(first.token().holder());
                store.fence(r, second.token(), () -> null);
                assertThatThrownBy(() -> store.fence(r, first.token(), () -> null))
                        .isInstanceOf(StaleTokenException.class);
            } finally {
                second.close();
            }
        } finally {
            one.shutdownNow();
        }
    }

    @Test
    void anotherThreadWaitsAndItsHolderDiffersSoAnEqualValueFromItIsRefused() throws Throwable {
        String r = fresh();
        InMemoryFenceStore store = new InMemoryFenceStore();
        Lease first = issuer.acquire(r, Duration.ofSeconds(10));
        try {
            store.fence(r, first.token(), () -> null);
            // another thread of the same process (same CP session) is not the holder: it waits, and times out
            assertThatThrownBy(() -> pool.submit(() -> issuer.acquire(r, Duration.ofMillis(500))).get(10,
                    TimeUnit.SECONDS)).hasCauseInstanceOf(LockAcquisitionException.class);
            // were it to present the first holder's value, its holder would differ: refused as a duplicate
            long otherThread = pool.submit(AsThread::current).get(10, TimeUnit.SECONDS);
            FencingToken equalValue = new FencingToken(r, first.token().value(),
                    issuer.holder(otherThread, first.token().value()));
            assertThat(equalValue.holder()).isNotEqualTo(first.token().holder());
            assertThatThrownBy(() -> store.fence(r, equalValue, () -> null))
                    .isInstanceOf(DuplicateTokenException.class);
            // and so would the same value from another issuer (another process) on the same thread id
            FencingToken otherProcess = new FencingToken(r, first.token().value(),
                    otherIssuer.holder(AsThread.current(), first.token().value()));
            assertThatThrownBy(() -> store.fence(r, otherProcess, () -> null))
                    .isInstanceOf(DuplicateTokenException.class);
        } finally {
            first.close();
        }
        Lease second = pool.submit(() -> issuer.acquire(r, Duration.ofSeconds(10))).get(20, TimeUnit.SECONDS);
        try {
            assertThat(second.token().value()).isGreaterThan(first.token().value());
            assertThat(second.token().holder()).isNotEqualTo(first.token().holder());
            store.fence(r, second.token(), () -> null);
            assertThatThrownBy(() -> store.fence(r, first.token(), () -> null)).isInstanceOf(StaleTokenException.class);
        } finally {
            pool.submit(second::close).get(20, TimeUnit.SECONDS);
        }
    }

    /**
     * A release the CP group does not answer (here held back on the releasing thread; in a trial, a member expelled
     * after a pause held its request thread 145 s in Hazelcast's operation timeout) returns to its caller after about
     * a second and finishes in the background: the lock is free once it has, and not before.
     */
    @Test
    void aReleaseTheCpGroupDoesNotAnswerGoesOnInTheBackground() throws Exception {
        String r = fresh();
        java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
        Lease lease = issuer.acquire(r, Duration.ofSeconds(10));
        issuer.beforeRelease = resource -> {
            if (resource.equals(r)) {
                try {
                    answer.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try {
            org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(10), lease::close);
            assertThatThrownBy(() -> otherIssuer.acquire(r, Duration.ofMillis(300)))
                    .as("the release has not reached the CP group yet").isInstanceOf(LockAcquisitionException.class);
            answer.countDown();
            try (Lease next = otherIssuer.acquire(r, Duration.ofSeconds(10))) {
                assertThat(next.token().value()).isGreaterThan(lease.token().value());
            }
            assertThat(lease.isLost()).isFalse();
        } finally {
            answer.countDown();
            issuer.beforeRelease = resource -> { };
        }
    }

    /**
     * One sequence: the group's current fence bounds every token issued for any resource, so the starter's startup
     * check can see a CP group restarted without persistence (a new user's trial had every write refused as stale,
     * health UP); whether a resource is locked now.
     */
    @Test
    void theCurrentFenceBoundsEveryTokenOfEveryResourceAndHeldIsTold() throws Exception {
        String a = fresh();
        String b = fresh();
        long highest;
        try (Lease first = issuer.acquire(a, Duration.ofSeconds(10))) {
            assertThat(issuer.isHeld(a)).isTrue();
            assertThat(otherIssuer.isHeld(a)).as("another member sees it too").isTrue();
            highest = first.token().value();
        }
        assertThat(issuer.isHeld(a)).isFalse();
        try (Lease second = otherIssuer.acquire(b, Duration.ofSeconds(10))) {
            highest = Math.max(highest, second.token().value());
        }
        assertThat(issuer.oneSequence()).isTrue();
        long current = issuer.highestIssued("any-resource");
        assertThat(current).isGreaterThanOrEqualTo(highest);
        try (Lease next = issuer.acquire(a, Duration.ofSeconds(10))) {
            assertThat(next.token().value()).as("a bound of what was issued, not more than what comes next")
                    .isGreaterThan(current);
        }
    }

    @Test
    void aLeaseClosedOnAnotherThreadReleasesTheLock() throws Exception {
        String r = fresh();
        HazelcastInstance member = group.members.get(0);
        String lockName = HazelcastTokenIssuer.lockName("semantics/", r);
        Lease lease = pool.submit(() -> issuer.acquire(r, Duration.ofSeconds(10))).get(20, TimeUnit.SECONDS);
        assertThat(member.getCPSubsystem().getLock(lockName).isLockedByCurrentThread())
                .as("FencedLock is thread-bound: the test thread does not own it").isFalse();
        assertThatCode(lease::close).doesNotThrowAnyException();   // on the test thread, not the acquiring one
        assertThat(lease.isReleased()).isTrue();
        assertThat(lease.isLost()).isFalse();
        assertThat(member.getCPSubsystem().getLock(lockName).isLocked()).isFalse();
        try (Lease next = otherIssuer.acquire(r, Duration.ofSeconds(2))) {
            assertThat(next.token().value()).isGreaterThan(lease.token().value());
        }
    }

    @Test
    void aResourceCannotSelectACpGroupAndStaysItsOwnLock() {
        String base = fresh();
        String withAt = base + "@metadata";
        Lease at = issuer.acquire(withAt, Duration.ofSeconds(10));
        try {
            assertThat(HazelcastTokenIssuer.lockName("p/", withAt)).isEqualTo("p/" + base + "%40metadata");
            try (Lease encoded = otherIssuer.acquire(base + "%40metadata", Duration.ofSeconds(2));
                 Lease plain = otherIssuer.acquire(base, Duration.ofSeconds(2))) {
                assertThat(encoded.token().resource()).isEqualTo(base + "%40metadata");
                assertThat(plain.token().resource()).isEqualTo(base);
            }
        } finally {
            at.close();
        }
    }

    /**
     * Hazelcast trims a CP object's name ({@code RaftService.withoutDefaultGroupName}), so {@code x} and {@code x }
     * (a legal resource: only a static name's spaces are refused) were one FencedLock: the holder of one kept the
     * other from being acquired, and two resources shared one lock and one fence.
     */
    @Test
    void resourcesDifferingInSpacesAtEitherEndAreLocksOfTheirOwn() {
        assertThat(HazelcastTokenIssuer.lockName("p/", "  a b %@ ")).isEqualTo("p/%20%20a b %25%40%20");
        assertThat(HazelcastTokenIssuer.lockName("p/", "%20a")).isEqualTo("p/%2520a");
        String base = fresh();
        try (Lease plain = issuer.acquire(base, Duration.ofSeconds(10))) {
            for (String spaced : List.of(base + " ", base + "  ")) {
                try (Lease other = otherIssuer.acquire(spaced, Duration.ofSeconds(2))) {
                    assertThat(other.token().resource()).isEqualTo(spaced);
                }
            }
        }
        HazelcastTokenIssuer unprefixed = new HazelcastTokenIssuer(group.members.get(0), "", Duration.ofMillis(200),
                null);
        try (Lease plain = unprefixed.acquire(base, Duration.ofSeconds(10));
             Lease leading = unprefixed.acquire(" " + base, Duration.ofSeconds(2))) {
            assertThat(leading.token().resource()).isEqualTo(" " + base);
        } finally {
            unprefixed.close();
        }
    }

    @Test
    void badConstructorArgumentsAreRefusedWithTheirName() {
        HazelcastInstance member = group.members.get(0);
        assertThatThrownBy(() -> new HazelcastTokenIssuer(member, "locks@group", Duration.ofSeconds(1), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefix");
        assertThatThrownBy(() -> new HazelcastTokenIssuer(member, "p/", Duration.ofMillis(10), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("checkInterval");
        assertThatThrownBy(() -> new HazelcastTokenIssuer(null, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("hazelcast");
    }

    @Test
    @Timeout(90)
    void aMemberInUnsafeModeOrNotRunningIsRefusedAtStartup() {
        try (CpGroup unsafe = new CpGroup(1, 0)) {
            HazelcastInstance member = unsafe.members.get(0);
            assertThatThrownBy(() -> new HazelcastTokenIssuer(member, null))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("unsafe mode").hasMessageContaining("cp-member-count")
                    .hasMessageContaining(unsafe.clusterName);
            member.getLifecycleService().terminate();
            assertThatThrownBy(() -> new HazelcastTokenIssuer(member, null))
                    .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("not running");
        }
    }
}
