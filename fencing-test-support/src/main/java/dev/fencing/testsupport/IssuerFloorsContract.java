package dev.fencing.testsupport;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.retention.IssuerFloors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What an issuer that is also {@link IssuerFloors} must do for compaction: once a family's floor is raised to a
 * value, every token it issues for a resource of that family (one it locked before, or a new one) is above the
 * value; bad arguments are refused, naming them. An issuer passes it with a subclass whose {@link #issuer()} returns
 * it, ready to lock.
 */
public abstract class IssuerFloorsContract {

    /** The issuer under test; must implement {@link IssuerFloors}. */
    protected abstract TokenIssuer issuer();

    /**
     * An issuer of the same kind on the same lock service but its own instance, as another process (or this one
     * after a restart) builds it: a floor raised through {@link #issuer()} must hold for its tokens too, since
     * compaction raises it in one process and every process issues. Defaults to {@link #issuer()}, which checks
     * nothing across instances: override it with a second instance whenever the issuer keeps state of its own.
     */
    protected TokenIssuer otherIssuer() {
        return issuer();
    }

    /**
     * Whether the issuer keeps a counter per resource (and so checks the arguments of
     * {@link IssuerFloors#raiseResourceFloor}); an issuer with one sequence keeps the default, which does nothing.
     */
    protected boolean perResourceCounters() {
        return false;
    }

    private IssuerFloors floors() {
        assertThat(issuer()).isInstanceOf(IssuerFloors.class);
        return (IssuerFloors) issuer();
    }

    private long take(String resource) {
        return take(issuer(), resource);
    }

    private static long take(TokenIssuer issuer, String resource) {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(10))) {
            return lease.token().value();
        }
    }

    @Test
    void afterAFloorIsRaisedEveryResourceOfTheFamilyIssuesAboveIt() {
        String family = "floors-" + UUID.randomUUID();
        long highest = 0;
        for (int i = 0; i < 5; i++) {
            highest = Math.max(highest, take(family + ":busy"));
        }
        take(family + ":quiet");
        floors().raiseFamilyFloor(family, highest); // what a compaction folding both resources would raise it to

        assertThat(take(family + ":quiet")).isGreaterThan(highest);
        assertThat(take(family + ":new")).isGreaterThan(highest);
        assertThat(take(family + ":busy")).isGreaterThan(highest);
    }

    /**
     * A resource's own floor, as a floor raise after a restore of the issuer's counters sets it: its next token is
     * above the floor, also for a resource it never locked; a lease held meanwhile keeps its token and is released as
     * its own (not lost); a lower floor later changes nothing. An issuer with one sequence meets it without doing
     * anything, as the floor here is a token it issued.
     */
    @Test
    void afterAResourcesFloorIsRaisedItsNextTokenIsAboveIt() {
        String family = "resource-floors-" + UUID.randomUUID();
        long highest = 0;
        for (int i = 0; i < 5; i++) {
            highest = Math.max(highest, take(family + ":busy"));
        }
        take(family + ":quiet");
        Lease held = issuer().acquire(family + ":held", Duration.ofSeconds(10));
        long heldToken = held.token().value();
        for (String resource : new String[] {"quiet", "new", "held"}) {
            floors().raiseResourceFloor(family + ":" + resource, highest);
        }
        assertThat(held.token().value()).isEqualTo(heldToken);
        assertThat(held.isLost()).as("the held lease is still its holder's").isFalse();
        held.close();

        assertThat(take(family + ":quiet")).isGreaterThan(highest);
        assertThat(take(family + ":new")).isGreaterThan(highest);
        assertThat(take(family + ":held")).isGreaterThan(highest);
        long before = take(family + ":quiet");
        floors().raiseResourceFloor(family + ":quiet", 1);
        assertThat(take(family + ":quiet")).as("never lowered").isGreaterThan(before);
    }

    /**
     * A family floor raised through one instance holds for the tokens of another ({@link #otherIssuer()}: compaction
     * raises it in one process, every process issues, and a restart must not forget it), for a resource that instance
     * locked before and a new one; and a later raise to a lower value (a later compaction's batch with lower
     * max_seen) lowers nothing.
     */
    @Test
    void aFamilyFloorHoldsForEveryInstanceAndALowerRaiseLowersNothing() {
        String family = "floors-everywhere-" + UUID.randomUUID();
        long highest = 0;
        for (int i = 0; i < 5; i++) {
            highest = Math.max(highest, take(family + ":busy"));
        }
        take(otherIssuer(), family + ":quiet");
        floors().raiseFamilyFloor(family, highest);
        floors().raiseFamilyFloor(family, 1);

        assertThat(take(otherIssuer(), family + ":quiet")).isGreaterThan(highest);
        assertThat(take(otherIssuer(), family + ":new")).isGreaterThan(highest);
        assertThat(take(family + ":another")).as("never lowered").isGreaterThan(highest);
    }

    @Test
    void blankFamiliesAndNegativeFloorsAreRefusedByName() {
        assertThatThrownBy(() -> floors().raiseFamilyFloor(" ", 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("family");
        assertThatThrownBy(() -> floors().raiseFamilyFloor("accounts", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("accounts")
                .hasMessageContaining("-1");
        if (perResourceCounters()) {
            assertThatThrownBy(() -> floors().raiseResourceFloor("accounts:1", -1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("accounts:1")
                    .hasMessageContaining("-1");
        }
    }
}
