package dev.fencing.testsupport;

import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour of a store built with a bound on one advance ({@code maxAdvance} = {@link #MAX_ADVANCE}): the whole
 * {@link FenceStoreContract} still holds, a token more than the bound above max_seen is refused as
 * {@link OutOfRangeTokenException} with max_seen unchanged, and a resource's first token is accepted whatever its
 * value. A store that offers the bound passes it with a subclass whose {@link #store()} returns it so configured.
 */
public abstract class BoundedAdvanceContract extends FenceStoreContract {

    /** The bound {@link #store()} must be built with. */
    public static final long MAX_ADVANCE = 1000;

    @Test
    void advanceUpToTheBoundIsAccepted() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 5, "a"), log, "5");
        write(r, token(r, 5 + MAX_ADVANCE, "b"), log, "edge");
        assertThat(log).containsExactly("5", "edge");
    }

    @Test
    void tokenBeyondTheBoundIsRefusedAndMaxSeenStays() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 5, "a"), log, "5");
        FencingToken forged = token(r, Long.MAX_VALUE, "evil");
        assertThatThrownBy(() -> write(r, forged, log, "forged"))
                .isInstanceOfSatisfying(OutOfRangeTokenException.class, e -> {
                    assertThat(e.verdict()).isEqualTo(Verdict.REJECT_OUT_OF_RANGE);
                    assertThat(e.presented()).isSameAs(forged);
                    assertThat(e.maxSeen()).isEqualTo(5);
                    assertThat(e.resource()).isEqualTo(r);
                });
        assertThatThrownBy(() -> write(r, token(r, 6 + MAX_ADVANCE, "b"), log, "one past"))
                .isInstanceOf(OutOfRangeTokenException.class);
        // max_seen is still 5 with holder a: a stays in, 4 stays stale, another holder's 5 a duplicate, 6 is newer
        write(r, token(r, 5, "a"), log, "5 again");
        assertThatThrownBy(() -> write(r, token(r, 4, "z"), log, "4")).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> write(r, token(r, 5, "z"), log, "5 z")).isInstanceOf(DuplicateTokenException.class);
        write(r, token(r, 6, "c"), log, "6");
        assertThat(log).containsExactly("5", "5 again", "6");
    }

    @Test
    void firstTokenIsAcceptedWhateverItsValue() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 10 * MAX_ADVANCE, "a"), log, "first");
        assertThatThrownBy(() -> write(r, token(r, 12 * MAX_ADVANCE, "b"), log, "jump"))
                .isInstanceOf(OutOfRangeTokenException.class);
        assertThat(log).containsExactly("first");
    }
}
