package dev.fencing.store;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * A forged token (no signing, no maxAdvance) raised one resource's max_seen above everything the issuer handed out.
 * The JDBC store's compaction, given an issuer that can say what it handed out, leaves such a row unfolded
 * (operations.md, "A family floor no issuer reached"): a reset can still lower it. The in-memory store folded it into
 * its family's floor, by compaction and by the bound alike: every resource of the family was then refused and the
 * in-memory issuer refused every acquisition ("Token counter ... is exhausted"), and nothing can lower an in-memory
 * family floor (no reset reaches a floor): only a restart, which forgets every max_seen, got the family back.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ForgedTokenFoldingTest {

    private static long acquireAndWrite(InMemoryTokenIssuer issuer, InMemoryFenceStore store, String resource)
            throws Throwable {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(1))) {
            store.fence(resource, lease.token(), () -> null);
            return lease.token().value();
        }
    }

    @Test
    void compactionLeavesAMaxSeenNoIssuedTokenReachedUnfolded() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = new InMemoryFenceStore();
        acquireAndWrite(issuer, store, "acct:1");
        acquireAndWrite(issuer, store, "acct:5");
        store.fence("acct:5", new FencingToken("acct:5", Long.MAX_VALUE, "evil"), () -> null);

        store.compact(Duration.ZERO, 10, issuer);

        assertThat(store.familyFloor("acct")).as("the family's floor").hasValue(1);
        assertThat(store.maxSeen("acct:5")).hasValue(Long.MAX_VALUE); // left for the reset
        assertThatCode(() -> acquireAndWrite(issuer, store, "acct:1")).doesNotThrowAnyException();
        assertThatCode(() -> acquireAndWrite(issuer, store, "acct:2")).doesNotThrowAnyException();
    }

    @Test
    void theBoundLeavesAMaxSeenNoIssuedTokenReachedUnfolded() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, issuer).build();
        acquireAndWrite(issuer, store, "acct:5");
        store.fence("acct:5", new FencingToken("acct:5", Long.MAX_VALUE, "evil"), () -> null);
        acquireAndWrite(issuer, store, "acct:1");
        for (int i = 10; i < 20; i++) {
            int key = i;
            assertThatCode(() -> acquireAndWrite(issuer, store, "acct:" + key)).as("acct:" + key)
                    .doesNotThrowAnyException();
        }
        assertThat(store.familyFloor("acct").orElse(0)).isLessThan(Long.MAX_VALUE);
    }

    @Test
    void theBoundFoldsOtherSlotsWhenTheLeastRecentlyAdvancedAreLeftForTheReset() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(16, issuer).build();
        for (String forged : new String[] {"acct:f1", "acct:f2", "acct:f3"}) { // the least recently advanced
            acquireAndWrite(issuer, store, forged);
            store.fence(forged, new FencingToken(forged, Long.MAX_VALUE, "evil"), () -> null);
        }
        for (int i = 0; i < 40; i++) {
            int key = i;
            assertThatCode(() -> acquireAndWrite(issuer, store, "acct:" + key)).as("acct:" + key)
                    .doesNotThrowAnyException();
        }
        assertThat(store.size()).isLessThanOrEqualTo(17);
        assertThat(store.maxSeen("acct:f1")).hasValue(Long.MAX_VALUE);
    }
}
