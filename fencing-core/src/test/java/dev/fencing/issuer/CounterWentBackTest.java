package dev.fencing.issuer;

import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every {@link AbstractTokenIssuer} (unless it opts out) refuses a token at or below one it handed out for the
 * resource before, gives the lock back through the lease's release, and counts the failure; a lock service whose
 * counter went back for one resource does not stop the others.
 */
@Timeout(10)
class CounterWentBackTest {

    private static final Duration NOW = Duration.ZERO;

    /** A lock service with a counter per resource that a test can set back, and a record of what was released. */
    static final class SettableIssuer extends AbstractTokenIssuer<SettableIssuer.SettableLease> {
        final ConcurrentHashMap<String, AtomicLong> counters = new ConcurrentHashMap<>();
        final ConcurrentHashMap<String, Boolean> locked = new ConcurrentHashMap<>();
        final List<Long> released = new ArrayList<>();

        SettableIssuer(SimpleMeterRegistry registry, boolean remember) {
            super(registry, "settable", remember);
        }

        @Override
        protected SettableLease doAcquire(String resource, Duration timeout, Grant grant) {
            if (locked.putIfAbsent(resource, true) != null) {
                throw new LockAcquisitionException(resource, "held");
            }
            grant.granted(() -> locked.remove(resource));
            long token = counters.computeIfAbsent(resource, r -> new AtomicLong()).incrementAndGet();
            return new SettableLease(this, new FencingToken(resource, token, "h" + token));
        }

        @Override
        protected boolean doRelease(SettableLease lease) {
            synchronized (released) {
                released.add(lease.token().value());
            }
            return locked.remove(lease.token().resource()) != null;
        }

        static final class SettableLease extends AbstractLease {
            SettableLease(SettableIssuer issuer, FencingToken token) {
                super(issuer, token);
            }
        }
    }

    @Test
    void aTokenAtOrBelowOneHandedOutBeforeIsRefusedAndItsLockGivenBack() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SettableIssuer issuer = new SettableIssuer(registry, true);
        for (int i = 0; i < 3; i++) {
            issuer.acquire("r", NOW).close();
        }
        assertThat(issuer.issuedHere("r")).isEqualTo(3);

        issuer.counters.get("r").set(1); // the lock service lost its data: it hands out 2 next
        assertThatThrownBy(() -> issuer.acquire("r", NOW))
                .isInstanceOfSatisfying(LockAcquisitionException.class, e -> {
                    assertThat(e.retryable()).as("no retry helps until the counter is raised").isFalse();
                    assertThat(e.resource()).isEqualTo("r");
                })
                .hasMessageContaining("resource 'r' (settable issuer) went back")
                .hasMessageContaining("handed out 2, yet this issuer handed out 3");
        assertThat(issuer.locked).as("the refused token's lock was given back").doesNotContainKey("r");
        assertThat(issuer.released).as("through the lease's release").endsWith(2L);
        assertThat(registry.get("fencing.issuer.acquisitions").tag("outcome", "failed").counter().count())
                .isEqualTo(1);

        issuer.counters.get("r").set(2); // equal to one handed out before: refused too
        assertThatThrownBy(() -> issuer.acquire("r", NOW)).hasMessageContaining("handed out 3, yet");

        try (Lease other = issuer.acquire("other", NOW)) {
            assertThat(other.token().value()).as("other resources go on").isEqualTo(1);
        }
        issuer.counters.get("r").set(10); // raised above: handed out again, and remembered
        try (Lease raised = issuer.acquire("r", NOW)) {
            assertThat(raised.token().value()).isEqualTo(11);
        }
        assertThat(issuer.issuedHere("r")).isEqualTo(11);
    }

    @Test
    void anIssuerThatOptsOutHandsOutWhatItsServiceGives() {
        SettableIssuer issuer = new SettableIssuer(new SimpleMeterRegistry(), false);
        issuer.acquire("r", NOW).close();
        issuer.acquire("r", NOW).close();
        issuer.counters.get("r").set(0);
        try (Lease lease = issuer.acquire("r", NOW)) {
            assertThat(lease.token().value()).isEqualTo(1);
        }
        assertThat(issuer.issuedHere("r")).isZero();
    }

    @Test
    void theLeastRecentlyLockedResourcesAreForgottenBeyondTheLimit() {
        SettableIssuer issuer = new SettableIssuer(new SimpleMeterRegistry(), true);
        issuer.acquire("first", NOW).close();
        issuer.acquire("kept", NOW).close();
        for (int i = 0; i < IssuedHere.REMEMBERED_RESOURCES - 1; i++) {
            issuer.acquire("r" + i, NOW).close();
            if (i == IssuedHere.REMEMBERED_RESOURCES / 2) {
                issuer.acquire("kept", NOW).close(); // locked again: the most recent now
            }
        }
        assertThat(issuer.issuedHere("first")).isZero();
        assertThat(issuer.issuedHere("kept")).isEqualTo(2);
    }
}
