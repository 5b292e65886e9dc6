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

    /** A floor read elsewhere (a fence store's max_seen) before the sequence was seen: at or below it went back. */
    @Test
    void aFloorReadElsewhereRefusesValuesAtOrBelowIt() {
        watch.floor(100, "the store's highest");
        watch.floor(50, "a lower one"); // never lowered
        assertThatThrownBy(() -> watch.accept(100, watch.seen(), false, "a node at"))
                .hasMessageStartingWith("Service at here answered a node at #100, not above #100, the store's "
                        + "highest: its sequence went back before this issuer could read it (wiped)");
        assertThat(watch.wentBack()).contains("not above #100, the store's highest");
        watch.accept(101, watch.seen(), false, "a node at");
        assertThat(watch.seen()).isEqualTo(101);
        SequenceWatch read = new SequenceWatch(() -> "Service at here", "its sequence", "wiped", value -> "#" + value);
        read.floor(100, "the store's highest");
        read.accept(100, read.seen(), true, "a read at"); // a read may equal it: it does not move the sequence
        SequenceWatch fresh = new SequenceWatch(() -> "Service at here", "its sequence", "wiped", value -> "#" + value);
        fresh.floor(100, "the store's highest");
        assertThatThrownBy(() -> fresh.accept(99, fresh.seen(), true, "a read at"))
                .hasMessageContaining("answered a read at #99, not above #100, the store's highest");
    }
}
