package dev.fencing.integration;

import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/** {@link FencedCandidate} under {@link LockRegistryLeaderInitiator}: each term's token, and misuse. */
@Timeout(30)
class FencedCandidateTest {

    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (LockRegistryLeaderInitiator initiator : initiators) {
            initiator.destroy();
        }
    }

    @Test
    void eachTermHandsItsLeaderTheTokenBoundOnTheInitiatorsThread() throws Exception {
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        LockRegistryLeaderInitiator a = start(new FencedLockRegistry(issuer, "leader:"), "a", events, 30_000);
        String first = events.poll(10, TimeUnit.SECONDS);
        assertThat(first).isEqualTo("a granted leader:jobs#1 bound=true");

        start(new FencedLockRegistry(issuer, "leader:"), "b", events, 50);
        a.getContext().yield(); // A gives up its term and waits 30 s before competing: B is elected with the next token
        assertThat(List.of(events.poll(10, TimeUnit.SECONDS), events.poll(10, TimeUnit.SECONDS)))
                .containsExactlyInAnyOrder("a revoked", "b granted leader:jobs#2 bound=true");
    }

    @Test
    void aCandidateUsedWithAnotherRegistryFailsOnItsGrantNamingTheMistake() {
        FencedLockRegistry registry = new FencedLockRegistry(issuer, "leader:");
        FencedCandidate candidate = candidate(registry, "c", new LinkedBlockingQueue<>());
        List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(FencedCandidate.class.getName());
        logger.addHandler(capture);
        try {
            for (int grant = 0; grant < 3; grant++) { // the initiator tries again and again
                assertThatThrownBy(() -> candidate.onGranted(() -> true))
                        .isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("'c'")
                        .hasMessageContaining("role 'jobs'").hasMessageContaining("same registry");
            }
        } finally {
            logger.removeHandler(capture);
        }
        // the initiator logs it at DEBUG only: the candidate says it once, at ERROR
        assertThat(records).singleElement().satisfies(record -> {
            assertThat(record.getLevel()).isEqualTo(java.util.logging.Level.SEVERE);
            assertThat(record.getMessage()).contains("same registry").contains("never leader");
        });
        assertThatThrownBy(() -> new FencedCandidate(registry, "d", "bad\nrole") {
            @Override
            protected void onGranted(Context context, FencingToken token) {
            }

            @Override
            public void onRevoked(Context context) {
            }
        }).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad\nrole");
    }

    /**
     * A leader whose lease ran out while no other candidate has written yet (the store alone would still accept its
     * token): the heartbeat tells it (onRevoked), and its work, whose binding was made during the term, is refused
     * before the store, as soon as the lease is known lost and after the hold is dropped.
     */
    @Test
    void aLeaderWhoseLeaseRanOutIsToldAndItsWorkIsRefusedBeforeAnyNewerLeaderWrote() throws Exception {
        InMemoryTokenIssuer shortLeases = new InMemoryTokenIssuer(java.time.Duration.ofMillis(300), 0);
        FencedLockRegistry registry = new FencedLockRegistry(shortLeases, "leader:");
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        java.util.concurrent.ExecutorService work = java.util.concurrent.Executors.newSingleThreadExecutor();
        java.util.concurrent.CompletableFuture<dev.fencing.context.FencingScope> bound =
                new java.util.concurrent.CompletableFuture<>();
        FencedCandidate candidate = new FencedCandidate(registry, "z", "jobs") {
            @Override
            protected void onGranted(Context context, FencingToken token) {
                if (!bound.isDone()) {
                    work.submit(() -> bound.complete(FencingContext.bind(token))); // bound for the term
                }
            }

            @Override
            public void onRevoked(Context context) {
                events.add("revoked");
            }
        };
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, candidate);
        initiator.setHeartBeatMillis(50);
        initiator.setBusyWaitMillis(30_000); // once deposed it waits: no newer term meanwhile
        initiators.add(initiator);
        try {
            initiator.start();
            bound.get(10, TimeUnit.SECONDS);
            TimeUnit.MILLISECONDS.sleep(600); // past the lease
            assertThat(events.poll(10, TimeUnit.SECONDS)).as("the heartbeat told it").isEqualTo("revoked");
            assertThat(shortLeases.highestIssued("leader:jobs")).as("no newer term").isEqualTo(1);
            Throwable refused = work.submit(() -> catchThrowable(() -> FencingContext.present("leader:jobs")))
                    .get(10, TimeUnit.SECONDS);
            assertThat(refused).isInstanceOfSatisfying(dev.fencing.rule.StaleTokenException.class,
                    e -> assertThat(e.lockLost()).isTrue());
        } finally {
            work.submit(() -> bound.join().close()).get(10, TimeUnit.SECONDS);
            work.shutdownNow();
        }
    }

    /**
     * The initiator obtains its lock once, when it starts, and a standby keeps that instance; an application that
     * expires its registry's unused locks ({@code expireUnusedOlderThan}, as for any {@code ExpirableLockRegistry})
     * drops it from the registry between two polls. When that standby was then granted the role, the candidate looked
     * up the registry's new instance, which its thread does not hold, and failed every grant as "not the same
     * registry": the node took the role and dropped it again at every poll and was never leader. Here the initiator's
     * steps are done by hand on this thread, so the instance is dropped for sure.
     */
    @Test
    void aStandbyWhoseLockTheRegistryExpiredIsGrantedItsTermsToken() throws Exception {
        FencedLockRegistry registry = new FencedLockRegistry(issuer, "leader:");
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        FencedCandidate candidate = candidate(registry, "s", events);
        FencedLock initiatorsLock = registry.obtain("jobs"); // what LockRegistryLeaderInitiator.start() keeps
        TimeUnit.MILLISECONDS.sleep(5);
        registry.expireUnusedOlderThan(0); // the standby's instance was unused: dropped
        assertThat(registry.obtain("jobs")).isNotSameAs(initiatorsLock);

        assertThat(initiatorsLock.tryLock(1, TimeUnit.SECONDS)).as("the standby wins the role").isTrue();
        try {
            candidate.onGranted(() -> true);
            assertThat(events.poll()).isEqualTo("s granted leader:jobs#" + initiatorsLock.token().value()
                    + " bound=true");
        } finally {
            initiatorsLock.unlock();
        }
        assertThatThrownBy(() -> candidate.onGranted(() -> false)).as("not held: still refused")
                .isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("same registry")
                .hasMessageContaining("holds no lock on resource 'leader:jobs'");
    }

    private LockRegistryLeaderInitiator start(FencedLockRegistry registry, String id, BlockingQueue<String> events,
                                              long busyWaitMillis) {
        LockRegistryLeaderInitiator initiator =
                new LockRegistryLeaderInitiator(registry, candidate(registry, id, events));
        initiator.setHeartBeatMillis(100);
        initiator.setBusyWaitMillis(busyWaitMillis);
        initiators.add(initiator);
        initiator.start();
        return initiator;
    }

    private static FencedCandidate candidate(FencedLockRegistry registry, String id, BlockingQueue<String> events) {
        return new FencedCandidate(registry, id, "jobs") {
            @Override
            protected void onGranted(Context context, FencingToken token) {
                boolean bound = token.equals(FencingContext.currentLocal("leader:jobs"));
                events.add(id + " granted " + token.resource() + "#" + token.value() + " bound=" + bound);
            }

            @Override
            public void onRevoked(Context context) {
                events.add(id + " revoked");
            }
        };
    }
}
