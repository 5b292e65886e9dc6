package dev.fencing.testsupport;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedTokens;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What an issuer that is also {@link IssuedTokens} must answer for recovery: a bound at or above every token it
 * issued for a resource and below the next one, and whether a lease on the resource is held now, resource by
 * resource. An issuer passes it with a subclass whose {@link #issuer()} returns it, ready to lock.
 */
public abstract class IssuedTokensContract {

    /** The issuer under test; must implement {@link IssuedTokens}. */
    protected abstract TokenIssuer issuer();

    /**
     * An issuer of the same kind on the same lock service but its own instance, as another process (or this one
     * after a restart) builds it: its answers must cover what {@link #issuer()} issued and holds, since recovery
     * may read them from any process. Defaults to {@link #issuer()}, which checks nothing across instances: override
     * it with a second instance whenever the issuer keeps state of its own.
     */
    protected TokenIssuer otherIssuer() {
        return issuer();
    }

    /**
     * For an issuer of one sequence ({@link IssuedTokens#oneSequence()}): a new instance on the same lock service,
     * for {@link #requireAboveRefusesEveryTokenAtOrBelowItsBound()} alone, which sets it a bound far above the
     * sequence (an instance that refuses every token from then on); closed by the test when it is
     * {@link AutoCloseable}. The default, {@code null}, skips that test: override it for an issuer of one sequence.
     */
    protected TokenIssuer freshIssuer() {
        return null;
    }

    private IssuedTokens issued() {
        return issued(issuer());
    }

    private static IssuedTokens issued(TokenIssuer issuer) {
        assertThat(issuer).isInstanceOf(IssuedTokens.class);
        return (IssuedTokens) issuer;
    }

    private static String fresh() {
        return "issued-" + UUID.randomUUID();
    }

    @Test
    void theBoundIsAtOrAboveEveryIssuedTokenAndBelowTheNext() {
        String r = fresh();
        long first;
        try (Lease lease = issuer().acquire(r, Duration.ofSeconds(10))) {
            first = lease.token().value();
        }
        long second;
        try (Lease lease = issuer().acquire(r, Duration.ofSeconds(10))) {
            second = lease.token().value();
        }
        long bound = issued().highestIssued(r);
        assertThat(bound).isGreaterThanOrEqualTo(Math.max(first, second));
        try (Lease next = issuer().acquire(r, Duration.ofSeconds(10))) {
            assertThat(next.token().value()).isGreaterThan(bound);
        }
    }

    @Test
    void aResourceIsHeldWhileItsLeaseIsAndOthersAreNot() {
        String r = fresh();
        String other = fresh();
        assertThat(issued().isHeld(r)).isFalse();
        try (Lease lease = issuer().acquire(r, Duration.ofSeconds(10))) {
            assertThat(issued().isHeld(r)).isTrue();
            assertThat(issued().isHeld(other)).isFalse();
            assertThat(issued().highestIssued(r)).isGreaterThanOrEqualTo(lease.token().value());
        }
        assertThat(issued().isHeld(r)).isFalse();
    }

    /**
     * Another instance on the same lock service ({@link #otherIssuer()}: another process, this one after a restart)
     * answers for what the first issued and holds: recovery reads them in whichever process runs it, and a bound
     * below a token issued elsewhere, or a lease held elsewhere read as free, would let it lower max_seen under a
     * live holder's token.
     */
    @Test
    void anotherInstanceAnswersForWhatThisOneIssuedAndHolds() {
        String r = fresh();
        IssuedTokens other = issued(otherIssuer());
        try (Lease lease = issuer().acquire(r, Duration.ofSeconds(10))) {
            assertThat(other.isHeld(r)).as("held through another instance").isTrue();
            assertThat(other.highestIssued(r)).isGreaterThanOrEqualTo(lease.token().value());
        }
        long bound = other.highestIssued(r);
        try (Lease next = otherIssuer().acquire(r, Duration.ofSeconds(10))) {
            assertThat(next.token().value()).isGreaterThan(bound);
            assertThat(issued().isHeld(r)).as("held through the other instance").isTrue();
            assertThat(issued().highestIssued(r)).isGreaterThanOrEqualTo(next.token().value());
        }
    }

    /**
     * {@link IssuedTokens#requireAbove}, for an issuer of one sequence: once told a bound (a fence store's highest
     * max_seen, read while the sequence could not be), it refuses a token at or below it, naming where the bound
     * came from, and gives the lock back; an issuer that ignored the bound would hand out tokens the fence refuses
     * at best, and below tokens in circulation after its service lost its data at worst.
     */
    @Test
    void requireAboveRefusesEveryTokenAtOrBelowItsBound() throws Exception {
        assumeTrue(issued().oneSequence(), "a counter per resource: requireAbove does nothing");
        TokenIssuer fresh = freshIssuer();
        assumeTrue(fresh != null, "no freshIssuer() to set a bound on");
        String r = fresh();
        try {
            long bound = issued(fresh).highestIssued(r) + 1_000_000_000L;
            issued(fresh).requireAbove(bound, "the contract's bound");
            Throwable refused = catchThrowable(() -> fresh.acquire(r, Duration.ofSeconds(10)).close());
            assertThat(refused).isInstanceOf(LockAcquisitionException.class)
                    .hasMessageContaining("the contract's bound");
            try (Lease next = issuer().acquire(r, Duration.ofSeconds(5))) { // the refused grant gave the lock back
                assertThat(next.token().value()).isPositive();
            }
        } finally {
            if (fresh instanceof AutoCloseable closeable) {
                closeable.close();
            }
        }
    }
}
