package dev.fencing.issuer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A value answered after another was seen must be above it (or equal, for a read); a lower one is kept as the why. */
@Timeout(5)
class SequenceWatchTest {

    private final SequenceWatch watch = new SequenceWatch(() -> "Service at here", "its sequence", "wiped",
            value -> "#" + value);

    @Test
    void valuesAboveTheHighestSeenAreAcceptedAndRaiseIt() {
        watch.accept(5, watch.seen(), false, "a node at");
        watch.accept(9, watch.seen(), false, "a node at");
        watch.accept(7, 5, false, "a node at"); // sent before 9 came back: above what was seen when it was sent
        assertThat(watch.seen()).isEqualTo(9);
        assertThat(watch.wentBack()).isNull();
    }

    @Test
    void aValueAtOrBelowTheOneSeenBeforeWentBackAndIsKept() {
        watch.accept(9, watch.seen(), false, "a node at");
        watch.accept(9, watch.seen(), true, "a read at"); // a read does not move the sequence
        assertThatThrownBy(() -> watch.accept(9, watch.seen(), false, "a node at"))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> watch.accept(3, watch.seen(), true, "a read at"))
                .hasMessageStartingWith("Service at here answered a read at #3, not above #9 which this issuer saw "
                        + "before: its sequence went back (wiped)")
                .hasMessageContaining("offset above every token issued before");
        assertThat(watch.wentBack()).startsWith("Service at here answered a read at #3");
        assertThat(watch.seen()).as("never lowered").isEqualTo(9);
    }
}
